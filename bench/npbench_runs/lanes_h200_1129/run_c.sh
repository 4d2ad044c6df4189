#!/bin/bash
# Stop 46, one H200: the pinned modules of s46_gpu5 again, their calls queued back to back (kernel time).
mkdir -p $OUT/s46g
R=$OUT/s46g
export PYTHONUNBUFFERED=1
run() { tag=$1; shift; timeout 100 python bench/gpu_old_new.py --old .devcarry/gen_head --new .devcarry/gen_lanes --rounds 8 --time-budget 1.0 --out $R/$tag "$@" 2>&1 | grep -v "^appyc: tuned" | tail -n 1 | sed "s/^/$tag /" | tee -a $R/pinned.log; }
run g1024_b2b --only gesummv --pin _gesummv_kernel0=1024,8 --back-to-back
run g1024_call --only gesummv --pin _gesummv_kernel0=1024,8
run g256_b2b --only gesummv --pin _gesummv_kernel0=256,4 --back-to-back
run s512_b2b --only softmax --pin _softmax_kernel0=512,4 --back-to-back
run s512_call --only softmax --pin _softmax_kernel0=512,4
run gv_b2b --only gemver.natural --pin _gemver_kernel1=64,8 --pin _gemver_kernel2=512,4 --back-to-back
run gv_call --only gemver.natural --pin _gemver_kernel1=64,8 --pin _gemver_kernel2=512,4
