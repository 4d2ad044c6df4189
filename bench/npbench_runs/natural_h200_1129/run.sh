#!/bin/bash
# Stop 43, one GPU: the full natural set with its peers in one invocation, then gemver's host probe.
# Modules: .devcarry/gen_s43 = `bench_npbench.py --generate DIR --set both` at f2b5a2f; .devcarry/gen_old = the same with
# the compiler of 08a386c (APPYC_BIN) and --set ours. Neither folder is in the repository.
mkdir -p $OUT/s43a
if [ "${1:-}" != body ]; then
  timeout 588 bash $0 body; echo "body rc=$?" >> $OUT/s43a/run.log
  cd $OUT && tar czf s43a.tgz s43a && rm -rf s43a; exit 0
fi
set -u
R=$OUT/s43a
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.mem,memory.total --format=csv,noheader | tee $R/gpus.txt
python scripts/bench_npbench.py --modules .devcarry/gen_s43 --set natural --max-reps 200 --deadline 430 --json $R/natural.json --out $R/natural.md 2>&1 | tee $R/natural.log
timeout 60 python bench/gpu_gemver_host.py --modules .devcarry/gen_s43 --out $R/host --tag a 2>&1 | tail -n 30 | tee $R/host.log
