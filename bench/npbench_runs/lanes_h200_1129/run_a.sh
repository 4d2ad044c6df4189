#!/bin/bash
# Stop 46, one H200: lane accumulators for strip loops' scalar reductions. (a) the tolerance loops,
# this build (.devcarry/tol_lanes) against ca254cc's (.devcarry/tol_head) in one process; (b) the
# benchmark modules that changed, both builds in one process (gpu_old_new.py).
mkdir -p $OUT/s46d
if [ "${1:-}" != body ]; then
  timeout 590 bash $0 body; echo "body rc=$?" >> $OUT/s46d/run.log
  exit 0
fi
set -u
R=$OUT/s46d
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.mem,memory.total --format=csv,noheader | tee $R/gpus.txt
date +%s > $R/t0
timeout 230 python bench/gpu_tolerance_loops.py --new .devcarry/tol_lanes --old .devcarry/tol_head --cases jacobi_2d --out $R/tol --rounds 6 --reps 5 --case-budget 100 2>&1 | grep -v "^appyc: tuned" | tail -n 30 | tee $R/tol.log
echo "tol rc=$? t=$(( $(date +%s) - $(cat $R/t0) ))" | tee -a $R/run.log
timeout 330 python bench/gpu_old_new.py --old .devcarry/gen_head --new .devcarry/gen_lanes --only $(cat .devcarry/changed46.txt) --rounds 8 --time-budget 1.0 --deadline 300 --out $R/oldnew 2>&1 | grep -v "^appyc: tuned" | tail -n 40 | tee $R/oldnew.log
echo "oldnew rc=$? t=$(( $(date +%s) - $(cat $R/t0) ))" | tee -a $R/run.log
