#!/bin/bash
# Stop 46, one H200: the modules that moved in s46_gpu4, both builds pinned to one configuration.
mkdir -p $OUT/s46e
R=$OUT/s46e
export PYTHONUNBUFFERED=1
run() { tag=$1; shift; timeout 100 python bench/gpu_old_new.py --old .devcarry/gen_head --new .devcarry/gen_lanes --rounds 8 --time-budget 1.0 --out $R/$tag "$@" 2>&1 | grep -v "^appyc: tuned" | tail -n 3 | tee -a $R/pinned.log; }
run g1024 --only gesummv --pin _gesummv_kernel0=1024,8
run g256 --only gesummv --pin _gesummv_kernel0=256,4
run g512 --only gesummv --pin _gesummv_kernel0=512,4
run s512 --only softmax --pin _softmax_kernel0=512,4
run s1024 --only softmax --pin _softmax_kernel0=1024,4
run gv --only gemver.natural --pin _gemver_kernel1=64,8 --pin _gemver_kernel2=512,4
run g1024b --only gesummv --pin _gesummv_kernel0=1024,8
