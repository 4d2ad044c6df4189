#!/bin/bash
# The symm (natural) check again with fifteen rounds (one call on the same H200 machine, after run.sh).
mkdir -p $OUT/s45f && PYTHONUNBUFFERED=1 timeout 200 python bench/gpu_tuner_check.py --modules .devcarry/gen_s45 --set natural --only symm --trials 3 --interleave --rounds 15 --max-reps 1000 --time-budget 0.6 --case-timeout 90 --deadline 180 --out $OUT/s45f 2>&1 | tail -12 | tee $OUT/s45f/tail.txt
