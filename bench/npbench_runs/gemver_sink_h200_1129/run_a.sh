#!/bin/bash
# Stop 44, one H200: gemver before (2e40714, gen_pre) and after (HEAD, gen_new) the sink of A's update into the row pass.
# Modules: `bench_npbench.py --generate DIR --set both` with each compiler (APPYC_BIN for the old one).
mkdir -p $OUT/s44a
if [ "${1:-}" != body ]; then
  timeout 588 bash $0 body; echo "body rc=$?" >> $OUT/s44a/run.log
  cd $OUT && tar czf s44a.tgz s44a && rm -rf s44a; exit 0
fi
set -u
R=$OUT/s44a
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.mem,memory.total --format=csv,noheader | tee $R/gpus.txt
date +%s > $R/t0
timeout 130 python bench/gpu_gemver_kernels.py --reordered --rounds 9 --reps 30 --out $R/reordered 2>&1 | tail -n 30 | tee $R/reordered.log
echo "reordered rc=$? t=$(( $(date +%s) - $(cat $R/t0) ))" | tee -a $R/run.log
timeout 150 python bench/gpu_old_new.py --old .devcarry/gen_pre --new .devcarry/gen_new --only gemver.natural,gemver --rounds 10 --deadline 120 --out $R/old_new 2>&1 | tail -n 8 | tee $R/old_new.log
echo "old_new rc=$? t=$(( $(date +%s) - $(cat $R/t0) ))" | tee -a $R/run.log
for run in new1:gen_new pre:gen_pre new2:gen_new; do
  tag=${run%%:*}; dir=${run#*:}
  timeout 80 python scripts/bench_npbench.py --modules .devcarry/$dir --set natural --only gemver --impls appyc,jax --max-reps 200 --deadline 60 --json $R/$tag.json --out $R/$tag.md > $R/$tag.log 2>&1
  echo "$tag rc=$? t=$(( $(date +%s) - $(cat $R/t0) ))" | tee -a $R/run.log
  grep -E "copy|appyc|jax" $R/$tag.log | tail -n 8
done
