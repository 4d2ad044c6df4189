#!/usr/bin/env python3
"""Issue 23's tuner check: on every benchmark kernel, appyc's tuned build is at least 0.95x
both its `--mvl 256` build and its `APPYC_AUTOTUNE=0` build, in every one of several fresh
processes.

A trial of a kernel is three fresh processes, one after another on one GPU, each with empty
APPYC_CACHE_DIR and TRITON_CACHE_DIR: the tuned build (called until its tuning settles, as
scripts/bench_npbench.py does), the `--mvl 256` build, the untuned build. Each process is
bench_npbench's own case process (`--case K --impl I`), so inputs, settling and the steady
state (median of repeated calls, written arrays restored between calls) are the benchmark's.
Trials spread over the GPUs the machine has (one worker a GPU); the next process starts up
while the current one is measured. Results are not checked here: bench_npbench's runs check
the same builds against NumPy. Each row keeps the configurations its process ended up with
(bench_npbench's "tuning": every tuning table's default and choices), and the log and the
markdown name those that are not the default, so a loss shows whether the tuner chose it or the
processes' timings differ at the same configuration.

    python3 bench/gpu_tuner_check.py --modules gen_npbench --trials 3 --out $OUT [--only k1,k2]
        [--gpus 1,2,3]
"""
import argparse
import json
import os
import queue
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Run from the repository root: scripts/ is found there also when this file is a copy elsewhere.
sys.path[:0] = [str(REPO / "scripts"), str(Path.cwd() / "scripts")]
import bench_npbench as nb  # noqa: E402

BUILDS = ("appyc", "appyc_mvl256", "appyc_default")
BOUND = 0.95


def case_args(a, work):
    return argparse.Namespace(work=str(work), size=a.size, device=a.device, time_budget=a.time_budget,
                              max_reps=a.max_reps, warmup=a.warmup, modules=a.modules)


def fresh_env(gpu, work, tag, build, device):
    env = dict(os.environ)
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = str(gpu)
    cache = Path(work) / "cache" / tag
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    env["TRITON_CACHE_DIR"] = str(cache / "triton")
    env["APPYC_CACHE_DIR"] = str(cache / "appyc")
    env.pop("APPYC_AUTOTUNE", None)
    if build == "appyc_default":
        env["APPYC_AUTOTUNE"] = "0"
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    return env


def worker(gpu, jobs, results, a, work, deadline, log):
    """Runs (trial, case) units from `jobs`: their three builds in order, each started while
    the one before is measured."""
    plan = []
    while True:
        try:
            plan.append(jobs.get_nowait())
        except queue.Empty:
            break
    steps = [(trial, case, build) for trial, case in plan for build in BUILDS]
    nxt = None
    for n, (trial, case, build) in enumerate(steps):
        tag = f"g{gpu}_t{trial}_{case}_{build}"
        if time.perf_counter() > deadline:
            results.append({"trial": trial, "case": case, "build": build, "status": "skipped (deadline)"})
            if nxt is not None:
                nxt.kill()
                nxt = None
            continue
        proc = nxt if nxt is not None else nb.Case(case, build, case_args(a, work), fresh_env(gpu, work, tag, build, a.device))
        nxt = None
        if n + 1 < len(steps):
            t2, c2, b2 = steps[n + 1]
            nxt = nb.Case(c2, b2, case_args(a, work), fresh_env(gpu, work, f"g{gpu}_t{t2}_{c2}_{b2}", b2, a.device))
        try:
            res = proc.run(min(a.case_timeout, max(5.0, deadline + a.case_timeout - time.perf_counter())))
        except Exception as exc:  # one failing process is a row, never the end of the check
            res = {"status": "error", "detail": f"{type(exc).__name__}: {exc}"[:300]}
            proc.kill()
        res.pop("out", None)
        row = {"trial": trial, "case": case, "build": build, "gpu": gpu, **res}
        results.append(row)
        ms = f"{res['ms']:.4g} ms" if "ms" in res else res.get("status")
        # The configurations the process ended up with where they are not the kernel's default
        # (its module's `_AppycTuning.chosen`; all of them are in the JSON's "tuning").
        chose = nb.left_defaults(res.get("tuning", {}))
        log(f"gpu {gpu} trial {trial} {nb.case_label(case):22s} {build:14s} {ms}"
            + (f"  (+{res.get('settle_calls', 0)} calls)" if build == "appyc" and "ms" in res else "")
            + (f"  chose {chose}" if chose else ""))
        shutil.rmtree(Path(work) / "cache" / tag, ignore_errors=True)
    if nxt is not None:
        nxt.kill()


def summary(results, trials):
    by = {}
    for r in results:
        by[(r["case"], r["trial"], r["build"])] = r
    cases = sorted({r["case"] for r in results}, key=nb.run_order)
    lines = ["| kernel | " + " | ".join(f"trial {t}: tuned ms, vs mvl256, vs untuned" for t in range(1, trials + 1))
             + " | worst |", "|---|" + "---|" * (trials + 1)]
    failures = []
    for c in cases:
        cells, worst = [], None
        for t in range(1, trials + 1):
            tuned, m256, dflt = (by.get((c, t, b), {}) for b in BUILDS)
            if "ms" not in tuned:
                cells.append(tuned.get("status", "-"))
                continue
            ratios = [o["ms"] / tuned["ms"] for o in (m256, dflt) if "ms" in o]
            text = [f"{tuned['ms']:.4g}"] + [f"{o['ms'] / tuned['ms']:.3f}x" if "ms" in o else "-" for o in (m256, dflt)]
            cells.append(", ".join(text))
            if ratios:
                worst = min(ratios) if worst is None else min(worst, *ratios)
        if worst is not None and worst < BOUND:
            failures.append(c)
        lines.append(f"| {nb.case_label(c)} | " + " | ".join(cells) + f" | {'-' if worst is None else f'{worst:.3f}x'} |")
    # Which configurations each tuned process (and each --mvl 256 process, whose tile kernels
    # are tuned too) kept other than the default: a loss at the default's own configuration is
    # the processes' noise, not the tuner's choice.
    lines += ["", "| kernel | trial | tuned build chose (not the default) | --mvl 256 build chose |",
              "|---|---|---|---|"]
    for c in cases:
        for t in range(1, trials + 1):
            tuned, m256 = (by.get((c, t, b), {}) for b in BUILDS[:2])
            if "tuning" in tuned or "tuning" in m256:
                chose = [nb.left_defaults(r.get("tuning", {})) or ("defaults" if "tuning" in r else "-")
                         for r in (tuned, m256)]
                lines.append(f"| {nb.case_label(c)} | {t} | {chose[0]} | {chose[1]} |")
    return lines, failures


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--modules", required=True)
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--only", type=lambda s: s.split(","), default=None)
    p.add_argument("--set", dest="sets", default="both")
    p.add_argument("--size", default="paper")
    p.add_argument("--device", default="cuda")
    p.add_argument("--gpus", type=lambda s: [int(x) for x in s.split(",")], default=None,
                   help="the GPUs to use, one worker each (default: every GPU)")
    p.add_argument("--time-budget", type=float, default=0.4)
    p.add_argument("--max-reps", type=int, default=15)
    p.add_argument("--warmup", type=float, default=0.1)
    p.add_argument("--case-timeout", type=float, default=60.0)
    p.add_argument("--deadline", type=float, default=400.0, help="seconds; later units are skipped")
    p.add_argument("--out", default=None)
    a = p.parse_args()
    out = Path(a.out) if a.out else Path(tempfile.mkdtemp())
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="tuner_check_"))
    logf = open(out / "tuner_check.log", "a")
    lock = threading.Lock()

    def log(line):
        with lock:
            print(line, flush=True)
            logf.write(line + "\n")
            logf.flush()

    sets = nb.SETS if a.sets == "both" else [a.sets]
    cases = [c for c in nb.all_cases(sets) if a.only is None or nb.split_case(c)[1] in a.only]
    cases.sort(key=nb.run_order)
    if a.device == "cpu":
        gpus = [None]
    else:
        import torch
        gpus = a.gpus or list(range(torch.cuda.device_count()))
    # Units dealt round-robin, a kernel's trials side by side on different GPUs, so a deadline
    # leaves whole kernels out rather than last trials.
    queues = {g: queue.Queue() for g in gpus}
    units = [(t, c) for c in cases for t in range(1, a.trials + 1)]
    for n, u in enumerate(units):
        queues[gpus[n % len(gpus)]].put(u)
    start = time.perf_counter()
    deadline = start + a.deadline
    results = []
    log(f"tuner check: {len(cases)} kernels x {a.trials} trials x {len(BUILDS)} builds on {len(gpus)} worker(s)")
    threads = [threading.Thread(target=worker, args=(g, queues[g], results, a, work, deadline, log))
               for g in gpus]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines, failures = summary(results, a.trials)
    text = "\n".join(lines)
    log(text)
    log(f"below {BOUND}x in some trial: {', '.join(nb.case_label(c) for c in failures) or 'none'}"
        f"  ({time.perf_counter() - start:.0f} s)")
    (out / "tuner_check.json").write_text(json.dumps(results, indent=1) + "\n")
    (out / "tuner_check.md").write_text(text + "\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
