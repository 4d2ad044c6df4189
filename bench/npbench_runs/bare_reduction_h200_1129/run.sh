#!/bin/bash
# Stop 44, one H200: relax_tol's sweep with the convergence test as bare NumPy (bench/sources/relax_np.py, compiled at
# d0b3982 into .devcarry/relax_np_gen.py) against the natural relax_tol (.devcarry/gen_now = bench_npbench --generate
# --set natural at d0b3982) and JAX, one process.
mkdir -p $OUT/s44v
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/s44v/gpus.txt
timeout 400 python bench/gpu_bare_reduction.py --modules .devcarry/gen_now --bare-module .devcarry/relax_np_gen.py --out $OUT/s44v 2>&1 | tail -n 20
echo "rc=$?" >> $OUT/s44v/bare_reduction.log
