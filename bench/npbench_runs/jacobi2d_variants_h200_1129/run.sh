#!/bin/bash
# Stop 45, one H200: the 2-D Jacobi-to-a-tolerance kernel's variants (bench/gpu_jacobi2d_variants.py) on the
# module of the join (.devcarry/tol_new/jacobi2d_clause.py).
mkdir -p $OUT/s45b
if [ "${1:-}" != body ]; then
  timeout 580 bash $0 body; echo "body rc=$?" >> $OUT/s45b/run.log
  exit 0
fi
set -u
R=$OUT/s45b
export PYTHONUNBUFFERED=1
date +%s > $R/t0
timeout 400 python bench/gpu_jacobi2d_variants.py --module .devcarry/tol_new/jacobi2d_clause.py --out $R --rounds 8 --reps 5 2>&1 | grep -v "^appyc: tuned" | tail -n 20 | tee $R/stdout.log
echo "variants rc=$? t=$(( $(date +%s) - $(cat $R/t0) ))" | tee -a $R/run.log
