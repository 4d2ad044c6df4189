#!/bin/bash
# Stop 42, one GPU: the natural set with its peers, references first (run of record).
mkdir -p $OUT/s42n
if [ "${1:-}" != body ]; then
  timeout 585 bash $0 body; echo "body rc=$?" >> $OUT/s42n/run.log
  cd $OUT && tar czf s42n.tgz s42n && rm -rf s42n; exit 0
fi
set -u
R=$OUT/s42n
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpus.txt
python scripts/bench_npbench.py --modules .devcarry/gen_s42 --set natural --refs-first --max-reps 200 --deadline 370 --json $R/natural.json --out $R/natural.md 2>&1 | tee $R/natural.log
