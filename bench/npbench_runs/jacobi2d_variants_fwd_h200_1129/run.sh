#!/bin/bash
# Stop 45, one H200: the 2-D Jacobi-to-a-tolerance kernel's variants on the module with store forwarding
# (.devcarry/tol_fwd/jacobi2d_clause.py): what the reload of A[i, j] still costs.
mkdir -p $OUT/s45g
if [ "${1:-}" != body ]; then
  timeout 400 bash $0 body; echo "body rc=$?" >> $OUT/s45g/run.log
  exit 0
fi
set -u
R=$OUT/s45g
export PYTHONUNBUFFERED=1
timeout 380 python bench/gpu_jacobi2d_variants.py --module .devcarry/tol_fwd/jacobi2d_clause.py --out $R --rounds 8 --reps 5 2>&1 | grep -v "^appyc: tuned" | tail -n 20 | tee $R/stdout.log
