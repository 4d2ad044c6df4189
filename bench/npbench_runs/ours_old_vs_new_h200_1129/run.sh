#!/bin/bash
# Stop 43, one H200: the ours set, appyc only, modules of 08a386c (before issue 23) and of f2b5a2f, in the order new, old, new.
# Modules: .devcarry/gen_s43 = `bench_npbench.py --generate DIR --set both` at f2b5a2f; .devcarry/gen_old = the same with
# the compiler of 08a386c (APPYC_BIN) and --set ours. Neither folder is in the repository.
mkdir -p $OUT/s43c
if [ "${1:-}" != body ]; then
  timeout 585 bash $0 body; echo "body rc=$?" >> $OUT/s43c/run.log
  cd $OUT && tar czf s43c.tgz s43c && rm -rf s43c; exit 0
fi
set -u
R=$OUT/s43c
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpus.txt
for run in new1:gen_s43 old:gen_old new2:gen_s43; do
  tag=${run%%:*}; dir=${run#*:}
  timeout 190 python scripts/bench_npbench.py --modules .devcarry/$dir --set ours --impls appyc --max-reps 200 --deadline 170 --json $R/$tag.json --out $R/$tag.md > $R/$tag.log 2>&1
  echo "$tag rc=$?" | tee -a $R/run.log
  grep -E "appyc  " $R/$tag.log | tail -n 20
done
