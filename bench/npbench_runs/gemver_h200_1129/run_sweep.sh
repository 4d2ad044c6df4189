#!/bin/bash
# Stop 43, one H200: gemver's kernels with their shape parameters opened up, then gemver against JAX once more.
mkdir -p $OUT/s43b
if [ "${1:-}" != body ]; then
  timeout 585 bash $0 body; echo "body rc=$?" >> $OUT/s43b/run.log
  cd $OUT && tar czf s43b.tgz s43b && rm -rf s43b; exit 0
fi
set -u
R=$OUT/s43b
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpus.txt
timeout 400 python bench/gpu_gemver_kernels.py --out $R/kernels --budget 330 2>&1 | tee $R/kernels.log
python scripts/bench_npbench.py --modules .devcarry/gen_s43 --set natural --only gemver --impls appyc,jax --max-reps 200 --deadline 120 --json $R/gemver.json --out $R/gemver.md 2>&1 | tail -n 5 | tee $R/gemver.log
