#!/bin/bash
# Stop 46, one H200: the tuner check (three builds of a trial in one process) on the modules the lane
# accumulators changed (.devcarry/gen_lanes, 278d3f3's compiler).
mkdir -p $OUT/s46h
if [ "${1:-}" != body ]; then
  timeout 560 bash $0 body; echo "body rc=$?" >> $OUT/s46h/run.log
  exit 0
fi
set -u
R=$OUT/s46h
export PYTHONUNBUFFERED=1
python bench/gpu_tuner_check.py --modules .devcarry/gen_lanes --set ours --only gesummv,softmax,trmm,gemver,gramschmidt --trials 3 --interleave --rounds 5 --max-reps 1000 --time-budget 0.6 --case-timeout 90 --deadline 380 --out $R/ours 2>&1 | tail -14 | tee $R/ours_tail.txt
python bench/gpu_tuner_check.py --modules .devcarry/gen_lanes --set natural --only gemver --trials 3 --interleave --rounds 5 --max-reps 1000 --time-budget 0.6 --case-timeout 90 --deadline 120 --out $R/natural 2>&1 | tail -6 | tee $R/natural_tail.txt
