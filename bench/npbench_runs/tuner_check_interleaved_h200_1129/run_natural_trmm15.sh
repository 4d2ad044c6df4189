#!/bin/bash
# Stop 44, one H200: issue 23's tuner check (item 4), three builds of a trial in one process: the natural set (five
# rounds), then trmm again with fifteen rounds (all three of its builds ran the default configuration and one trial
# of the ours set was below 0.95x). Modules: .devcarry/gen_head (`bench_npbench.py --generate DIR --set both` at c23c2c4).
mkdir -p $OUT/s44u
if [ "${1:-}" != body ]; then
  timeout 588 bash $0 body; echo "body rc=$?" >> $OUT/s44u/run.log
  cd $OUT && tar czf s44u.tgz s44u && rm -rf s44u; exit 0
fi
set -u
R=$OUT/s44u
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpus.txt
python bench/gpu_tuner_check.py --modules .devcarry/gen_head --set natural --trials 3 --interleave --rounds 5 --max-reps 1000 --time-budget 0.6 --case-timeout 90 --deadline 400 --out $R/natural 2>&1 | tail -30 | tee $R/natural_tail.txt
python bench/gpu_tuner_check.py --modules .devcarry/gen_head --set ours --only trmm --trials 3 --interleave --rounds 15 --max-reps 1000 --time-budget 0.6 --case-timeout 90 --deadline 100 --out $R/trmm15 2>&1 | tail -8 | tee $R/trmm15_tail.txt
