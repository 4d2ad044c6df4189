#!/bin/bash
# Stop 41: the fast-path and replay check, and gemver's host probe, on the modules of main's head.
R=$OUT/fp; mkdir -p $R
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpus.txt
timeout 400 python bench/gpu_fast_path_check.py --modules .devcarry/gen_s41c --set ours --out $R > $R/ours.out 2>&1 &
timeout 400 python bench/gpu_fast_path_check.py --modules .devcarry/gen_s41c --set natural --out $R > $R/natural.out 2>&1 &
wait
timeout 60 python bench/gpu_gemver_host.py --modules .devcarry/gen_s41c --out $R --tag _head2 > /dev/null 2>&1
echo "gemver_host rc=$?"
grep -c "^ok" $R/fast_path_check_*.log
