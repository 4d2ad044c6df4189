#!/bin/bash
# Stop 45, one H200: the tuner check with the three builds of a trial in one process (--interleave) on the
# modules this stop changed and on symm (natural), whose --mvl 256 build beat the tuned one across processes in
# run s45d (.devcarry/gen_s45).
mkdir -p $OUT/s45e
if [ "${1:-}" != body ]; then
  timeout 560 bash $0 body; echo "body rc=$?" >> $OUT/s45e/run.log
  exit 0
fi
set -u
R=$OUT/s45e
export PYTHONUNBUFFERED=1
python bench/gpu_tuner_check.py --modules .devcarry/gen_s45 --set natural --only symm,relax_tol,gemver --trials 3 --interleave --rounds 5 --max-reps 1000 --time-budget 0.6 --case-timeout 90 --deadline 300 --out $R/natural 2>&1 | tail -20 | tee $R/natural_tail.txt
python bench/gpu_tuner_check.py --modules .devcarry/gen_s45 --set ours --only gramschmidt --trials 3 --interleave --rounds 5 --max-reps 1000 --time-budget 0.6 --case-timeout 90 --deadline 150 --out $R/ours 2>&1 | tail -10 | tee $R/ours_tail.txt
