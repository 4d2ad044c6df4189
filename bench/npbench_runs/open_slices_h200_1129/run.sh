#!/bin/bash
# Stop 46, one H200: convergence tests over open slices (`B[1:-1] - A[1:-1]`): this build (c3252f4: converted,
# checked at the launch, joined in 1-D) against ca254cc's (the loop stayed on the host), beside the clause forms.
mkdir -p $OUT/s46j
export PYTHONUNBUFFERED=1
timeout 280 python bench/gpu_tolerance_loops.py --new .devcarry/tol_open_new --old .devcarry/tol_open_old --bare-suffix _open --cases relax_1d jacobi_2d --n2d 1000 --out $OUT/s46j --rounds 3 --reps 3 --case-budget 60 2>&1 | grep -v "^appyc: tuned" | tail -n 30 | tee $OUT/s46j/stdout.log
