#!/usr/bin/env python3
"""Issue 23 item 4 on symm: why the tuned build's steady state varies from process to process
(0.12-0.19 ms on one H100, where the untuned build stays at 0.135-0.148 ms;
bench/npbench_runs/gemver_symm_h100_1127). In each of --procs fresh processes (own
APPYC_CACHE_DIR, shared Triton cache), for symm's two sources (scripts/npbench/symm.py and the
natural one, compiled into --modules): call symm at the `paper` size until its tile kernel's
tuner settles, record the choice and the tuner's own timing, then time the steady state of the
whole call (wall, median of --calls calls, C restored before each, as scripts/bench_npbench.py
does) under the choice and under every candidate tile forced, in interleaved rounds, and the
kernel alone under CUDA events (after the device spin, as the tuner times it).

    python bench/gpu_symm_tiles.py --modules DIR --out $OUT     (GPU machine)
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCES = {"ours": "symm.py", "natural": "natural/symm.py"}


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def child(args):
    import numpy as np
    import torch

    out = {}
    for label, rel in SOURCES.items():
        mod = load(Path(args.modules) / rel, f"symm_{label}")
        table = mod._symm_kernel0_tiles_tuning
        rng = np.random.default_rng(42)
        M, N = 1000, 1200
        alpha, beta = 1.5, 1.2
        C0 = torch.from_numpy(rng.random((M, N))).cuda()
        A = torch.from_numpy(rng.random((M, M))).cuda()
        B = torch.from_numpy(rng.random((M, N))).cuda()
        C = C0.clone()
        picked = []
        orig_fastest = mod._appyc_fastest

        def fastest(kernel, candidates, default, written, launch):  # the tuner's own verdicts
            choice = orig_fastest(kernel, candidates, default, written, launch)
            picked.append({"tried": [list(c) for c in candidates], "chose": list(choice)})
            return choice

        mod._appyc_fastest = fastest
        calls = 0
        while not table.chosen and calls < 40:
            C.copy_(C0)
            mod.symm(alpha, beta, C, A, B)
            calls += 1
        torch.cuda.synchronize()
        key, choice = next(iter(table.chosen.items()))
        configs = [tuple(choice)] + [c for c in mod._APPYC_TILE_CANDIDATES if c != tuple(choice)]
        wall = {c: [] for c in configs}
        kernel = {c: [] for c in configs}
        for _ in range(args.rounds):
            for c in configs:
                table.chosen[key] = c
                for _ in range(args.calls):
                    C.copy_(C0)
                    torch.cuda.synchronize()
                    s = time.perf_counter()
                    mod.symm(alpha, beta, C, A, B)
                    torch.cuda.synchronize()
                    wall[c].append(1e3 * (time.perf_counter() - s))
                    C.copy_(C0)
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    mod._appyc_spin()
                    start.record()
                    mod._launch_symm_kernel0_tiles(*tile_args(mod, label, alpha, beta, C, A, B), c)
                    end.record()
                    end.synchronize()
                    kernel[c].append(start.elapsed_time(end))
        out[label] = {"tuning_calls": calls, "tuner": picked, "choice": list(choice),
                      "wall_ms": {str(list(c)): statistics.median(v) for c, v in wall.items()},
                      "kernel_ms": {str(list(c)): statistics.median(v) for c, v in kernel.items()}}
    print("RESULT " + json.dumps(out), flush=True)


def tile_args(mod, label, alpha, beta, C, A, B):
    """The tile launcher's arguments before the configuration, as the generated symm passes them."""
    import inspect

    names = list(inspect.signature(mod._launch_symm_kernel0_tiles).parameters)[:-1]
    values = {"A": A, "B": B, "C": C, "alpha": alpha, "beta": beta, "M": C.shape[0], "N": C.shape[1],
              "_appyc_rows": C.shape[0], "_appyc_cols": C.shape[1]}
    return [values[n] for n in names]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modules", required=True)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--procs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    if args.child:
        return child(args)
    results = []
    triton_cache = tempfile.mkdtemp()
    for p in range(args.procs):
        env = dict(os.environ, APPYC_CACHE_DIR=tempfile.mkdtemp(), TRITON_CACHE_DIR=triton_cache)
        run = subprocess.run([sys.executable, __file__, "--child", "--modules", args.modules,
                              "--rounds", str(args.rounds), "--calls", str(args.calls)],
                             env=env, capture_output=True, text=True, timeout=240)
        line = next((ln for ln in run.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if line is None:
            print(run.stdout[-2000:], run.stderr[-3000:])
            continue
        r = json.loads(line[7:])
        results.append(r)
        for label, v in r.items():
            print(f"process {p} {label}: chose {v['choice']} after {v['tuning_calls']} calls; tuner {v['tuner']}")
            for c in v["wall_ms"]:
                print(f"    {c:24} wall {v['wall_ms'][c]:.4f} ms   kernel {v['kernel_ms'][c]:.4f} ms")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "symm_tiles.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
