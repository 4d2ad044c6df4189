#!/bin/bash
# Stop 41: launch fast path and replayed launchers on one GPU, both sets, small and paper.
R=$OUT/fp; mkdir -p $R
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpus.txt
timeout 540 python bench/gpu_fast_path_check.py --modules .devcarry/gen_s41 --set ours --out $R > $R/ours.out 2>&1 &
timeout 540 python bench/gpu_fast_path_check.py --modules .devcarry/gen_s41 --set natural --out $R > $R/natural.out 2>&1 &
wait
tail -3 $R/ours.out $R/natural.out
