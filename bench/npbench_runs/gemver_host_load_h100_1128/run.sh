#!/bin/bash
# Stop 42, one GPU: does host load (NumPy references beside the cases) move gemver's call?
mkdir -p $OUT/s42
if [ "${1:-}" != body ]; then
  timeout 560 bash $0 body; echo "body rc=$?" >> $OUT/s42/run.log
  cd $OUT && tar czf s42a.tgz s42 && rm -rf s42; exit 0
fi
set -u
R=$OUT/s42
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $R/gpus.txt
nproc >> $R/gpus.txt
M=.devcarry/gen_s42
W=/tmp/npw; mkdir -p $W
start=$(date +%s)
hogs() { for i in 1 2 3 4; do python .devcarry/hog.py $1 & done; }
nb() {  # tag, extra flags
  timeout 100 python scripts/bench_npbench.py --modules $M --set natural --only gemver --impls appyc,jax --max-reps 200 --work $W --deadline 90 --json $R/gemver_$1.json --out $R/gemver_$1.md "${@:2}" > $R/gemver_$1.log 2>&1
  echo "gemver $1 rc=$? $(( $(date +%s) - start )) s $(grep -h 'appyc  \|JAX jit' $R/gemver_$1.log | awk '{print $(NF-4)}' | tr '\n' ' ')" | tee -a $R/run.log
}
nb quiet1 --refs-first
hogs 45; sleep 1; nb loaded1 --refs-first; wait
nb beside1
nb quiet2 --refs-first
hogs 45; sleep 1; nb loaded2 --refs-first; wait
timeout 60 python bench/gpu_gemver_host.py --modules $M --out $R/host --tag _quiet > /dev/null 2>&1; echo "host quiet rc=$?" | tee -a $R/run.log
hogs 40; sleep 1
timeout 60 python bench/gpu_gemver_host.py --modules $M --out $R/host --tag _loaded > /dev/null 2>&1; echo "host loaded rc=$?" | tee -a $R/run.log
wait
nb beside2
