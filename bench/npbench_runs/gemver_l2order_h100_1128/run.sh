#!/bin/bash
# Stop 42, one GPU: gemver (natural) with kernel 2 walking rows last-first (R), and with kernel 1's
# row chunks interleaved over the splits as well (RI), against main's modules.
mkdir -p $OUT/s42g
if [ "${1:-}" != body ]; then
  timeout 400 bash $0 body; echo "body rc=$?" >> $OUT/s42g/run.log
  cd $OUT && tar czf s42g.tgz s42g && rm -rf s42g; exit 0
fi
set -u
R=$OUT/s42g
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpus.txt
for round in 1 2; do
  for m in gen_s42 gv_R gv_RI; do
    timeout 60 python bench/gpu_gemver_host.py --modules .devcarry/$m --out $R/host --tag _${m}_$round > /dev/null 2>&1; echo "$m $round rc=$?" | tee -a $R/run.log
  done
done
grep -h "back to back runs\|round\|==" $R/host/gemver_host.log
