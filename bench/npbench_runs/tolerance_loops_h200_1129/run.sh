#!/bin/bash
# Stop 45, one H200: relaxations to a tolerance as users write them (bare np.max test, clause form), modules of
# the join (.devcarry/tol_new) and of 4371136 (.devcarry/tol_old), and JAX's lax.while_loop.
mkdir -p $OUT/s45a
if [ "${1:-}" != body ]; then
  timeout 580 bash $0 body; echo "body rc=$?" >> $OUT/s45a/run.log
  exit 0
fi
set -u
R=$OUT/s45a
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.mem,memory.total --format=csv,noheader | tee $R/gpus.txt
date +%s > $R/t0
timeout 520 python bench/gpu_tolerance_loops.py --new .devcarry/tol_new --old .devcarry/tol_old --out $R --rounds 6 --reps 5 --case-budget 100 2>&1 | tail -n 40 | tee $R/stdout.log
echo "tol rc=$? t=$(( $(date +%s) - $(cat $R/t0) ))" | tee -a $R/run.log
