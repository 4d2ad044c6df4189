#!/bin/bash
# Stop 45, one H200: (1) relaxations to a tolerance, modules with store forwarding (.devcarry/tol_fwd) against
# 4371136's (.devcarry/tol_old); (2) the benchmark modules the change touches, both builds in one process
# (.devcarry/gen_old45: 4371136, .devcarry/gen_new45: this change).
mkdir -p $OUT/s45c
if [ "${1:-}" != body ]; then
  timeout 585 bash $0 body; echo "body rc=$?" >> $OUT/s45c/run.log
  exit 0
fi
set -u
R=$OUT/s45c
export PYTHONUNBUFFERED=1
date +%s > $R/t0
timeout 260 python bench/gpu_tolerance_loops.py --new .devcarry/tol_fwd --old .devcarry/tol_old --out $R/tol --rounds 6 --reps 5 --case-budget 60 2>&1 | grep -v "^appyc: tuned" | tail -n 30 | tee $R/tol.log
echo "tol rc=$? t=$(( $(date +%s) - $(cat $R/t0) ))" | tee -a $R/run.log
timeout 280 python bench/gpu_old_new.py --old .devcarry/gen_old45 --new .devcarry/gen_new45 --only gramschmidt,gemver.natural,relax_tol.natural --rounds 10 --deadline 270 --out $R/old_new 2>&1 | grep -v "^appyc: tuned" | tail -n 30 | tee $R/old_new.log
echo "old_new rc=$? t=$(( $(date +%s) - $(cat $R/t0) ))" | tee -a $R/run.log
