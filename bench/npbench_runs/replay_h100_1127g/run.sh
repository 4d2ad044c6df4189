#!/bin/bash
mkdir -p $OUT/s41
if [ "${1:-}" != body ]; then
  timeout 540 bash $0 body; echo "body rc=$?" >> $OUT/s41/run.log
  cd $OUT && tar czf s41.tgz s41 && rm -rf s41; exit 0
fi
# Stop 41, one H100: replayed launchers (gen_s41) against main before them (gen_s40).
set -u
R=$OUT/s41
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpus.txt
W=/tmp/npw; mkdir -p $W
start=$(date +%s)
for round in 1 2; do
  for m in gen_s40 gen_s41; do
    timeout 60 python bench/gpu_gemver_host.py --modules .devcarry/$m --out $R/gemver_host --tag _${m}_$round > /dev/null 2>&1; echo "gemver_host $m $round rc=$? $(( $(date +%s) - start )) s" | tee -a $R/run.log
  done
done
for round in 1 2; do
  for m in gen_s41 gen_s40; do
    timeout 100 python scripts/bench_npbench.py --modules .devcarry/$m --set natural --only gemver --impls appyc,jax --max-reps 200 --work $W --keep --deadline 95 --json $R/natural_gemver_${m}_$round.json --out $R/natural_gemver_${m}_$round.md > $R/natural_gemver_${m}_$round.log 2>&1
    echo "natural gemver $m $round rc=$? $(( $(date +%s) - start )) s" | tee -a $R/run.log
  done
done
for round in 1 2; do
  for m in gen_s41 gen_s40; do
    timeout 90 python scripts/bench_npbench.py --modules .devcarry/$m --set ours --only covariance,gemver,gesummv,go_fast,softmax,trmm --impls appyc --max-reps 200 --work $W --keep --deadline 85 --json $R/ours_${m}_$round.json --out $R/ours_${m}_$round.md > $R/ours_${m}_$round.log 2>&1
    echo "ours $m $round rc=$? $(( $(date +%s) - start )) s" | tee -a $R/run.log
  done
done
