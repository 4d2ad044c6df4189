#!/bin/bash
# Stop 42, 4 GPUs: the tuner check with the three builds of a trial in one process.
mkdir -p $OUT/s42t
if [ "${1:-}" != body ]; then
  timeout 585 bash $0 body; echo "body rc=$?" >> $OUT/s42t/run.log
  cd $OUT && tar czf s42t.tgz s42t && rm -rf s42t; exit 0
fi
set -u
R=$OUT/s42t
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpus.txt
G=$(python -c "import torch; print(','.join(map(str, range(torch.cuda.device_count()))))")
python bench/gpu_tuner_check.py --modules .devcarry/gen_s42 --trials 3 --gpus $G --interleave --rounds 5 --max-reps 1000 --time-budget 0.6 --case-timeout 90 --deadline 480 --out $R/tc 2>&1 | tail -80 > $R/tail.txt
