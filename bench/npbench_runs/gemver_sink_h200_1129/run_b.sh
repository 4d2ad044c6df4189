#!/bin/bash
# Stop 44, one H200: is k1's read-write pass bound by in-place updates (copy against in-place floors), can k2 read
# part of A from L2 (row orders), and the host path of the generated call (modules of 2e40714: .devcarry/gen_pre).
mkdir -p $OUT/s44b
if [ "${1:-}" != body ]; then
  timeout 588 bash $0 body; echo "body rc=$?" >> $OUT/s44b/run.log
  cd $OUT && tar czf s44b.tgz s44b && rm -rf s44b; exit 0
fi
set -u
R=$OUT/s44b
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.mem,memory.total --format=csv,noheader | tee $R/gpus.txt
date +%s > $R/t0
timeout 300 python bench/gpu_gemver_kernels.py --floors --rounds 9 --reps 30 --out $R/floors 2>&1 | tail -n 32 | tee $R/floors.log
echo "floors rc=$? t=$(( $(date +%s) - $(cat $R/t0) ))" | tee -a $R/run.log
timeout 100 python bench/gpu_gemver_host.py --modules .devcarry/gen_pre --out $R/host --rounds 5 2>&1 | tail -n 12 | tee $R/host.log
echo "host rc=$? t=$(( $(date +%s) - $(cat $R/t0) ))" | tee -a $R/run.log
