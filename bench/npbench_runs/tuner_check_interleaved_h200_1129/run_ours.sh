#!/bin/bash
# Stop 44, one H200: issue 23's tuner check (item 4) with the three builds of a trial in one process; $1: the set (ours, natural), $2: --only list or "".
# Modules: .devcarry/gen_head = `bench_npbench.py --generate DIR --set both` at c23c2c4 (not in the repository).
SET=${1:-ours}; ONLY=${2:-}
mkdir -p $OUT/s44t_$SET
if [ "${3:-}" != body ]; then
  timeout 588 bash $0 "$SET" "$ONLY" body; echo "body rc=$?" >> $OUT/s44t_$SET/run.log
  cd $OUT && tar czf s44t_$SET.tgz s44t_$SET && rm -rf s44t_$SET; exit 0
fi
set -u
R=$OUT/s44t_$SET
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpus.txt
G=$(python -c "import torch; print(','.join(map(str, range(torch.cuda.device_count()))))")
python bench/gpu_tuner_check.py --modules .devcarry/gen_head --set $SET ${ONLY:+--only $ONLY} --trials 3 --gpus $G --interleave --rounds 5 --max-reps 1000 --time-budget 0.6 --case-timeout 90 --deadline 490 --out $R/tc 2>&1 | tail -60 | tee $R/tail.txt
