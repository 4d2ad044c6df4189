#!/bin/bash
# Stop 45, one H200: the full natural set with its peers in one invocation, modules of fe7fc04's compiler
# (.devcarry/gen_s45 = `bench_npbench.py --generate DIR --set both`; not in the repository).
mkdir -p $OUT/s45d
if [ "${1:-}" != body ]; then
  timeout 588 bash $0 body; echo "body rc=$?" >> $OUT/s45d/run.log
  exit 0
fi
set -u
R=$OUT/s45d
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.mem,memory.total --format=csv,noheader | tee $R/gpus.txt
python scripts/bench_npbench.py --modules .devcarry/gen_s45 --set natural --max-reps 200 --deadline 450 --json $R/natural.json --out $R/natural.md 2>&1 | grep -v "^appyc: tuned" | tail -n 60 | tee $R/natural.log
