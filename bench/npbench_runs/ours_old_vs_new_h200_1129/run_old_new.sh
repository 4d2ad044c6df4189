#!/bin/bash
# Stop 43, one H200: the ours kernels of 08a386c (before issue 23; .devcarry/gen_old) and of f2b5a2f
# (.devcarry/gen_s43), both from `bench_npbench.py --generate`, in one process (bench/gpu_old_new.py).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 280 python bench/gpu_old_new.py --old .devcarry/gen_old --new .devcarry/gen_s43 --only symm,softmax,gesummv,trmm,syrk,syr2k,covariance,gemver,go_fast,gemm,gramschmidt,fdtd_2d,floyd_warshall --rounds 10 --time-budget 2 --deadline 230 --out $OUT/on
