#!/usr/bin/env python3
"""Quick GPU check of appyc's tile kernels: each linear-algebra NPBench kernel compiled by appyc,
at `paper` size, with tiles (default) and without (APPYC_TILES=0), against the NumPy math of
bench_npbench.py and timed beside torch's eager version. A probe for tuning the tile lowering;
the benchmark of record is bench_npbench.py.

    python bench/gpu_tile_check.py --modules gen_npbench --out $OUT
"""
import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))  # bench_npbench
import bench_npbench as bench  # noqa: E402

KERNELS = ["gemm", "syrk", "syr2k", "trmm", "symm", "covariance"]


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def timed(fn, restore, reps=15):
    times = []
    for _ in range(reps):
        restore()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2] * 1e3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--modules", default="gen_npbench")
    p.add_argument("--out", default=".")
    p.add_argument("--only", default=",".join(KERNELS))
    p.add_argument("--configs", action="store_true",
                   help="also time the tile kernels at every candidate shape")
    a = p.parse_args()
    log = open(os.path.join(a.out, "tile_check.log"), "w")

    def say(s):
        print(s, flush=True)
        log.write(s + "\n")
        log.flush()
    for kernel in a.only.split(","):
        mod = load(Path(a.modules) / f"{kernel}.py", f"gen_{kernel}")
        named = bench.make_inputs(kernel, "paper")  # [(name, value)]
        names = [n for n, _ in named]
        inputs = [v for _, v in named]
        np_args = [x.copy() if isinstance(x, np.ndarray) else x for x in inputs]
        np_ret = bench.MATH[kernel](*np_args)
        pristine = [torch.from_numpy(x).cuda() if isinstance(x, np.ndarray) else x
                    for x in inputs]
        work = [x.clone() if isinstance(x, torch.Tensor) else x for x in pristine]

        def restore():
            for w, p0 in zip(work, pristine):
                if isinstance(w, torch.Tensor):
                    w.copy_(p0)
        fn = getattr(mod, kernel)
        for tiles in ["1", "0"]:
            os.environ["APPYC_TILES"] = tiles
            restore()
            t0 = time.perf_counter()
            ret = fn(*work)
            torch.cuda.synchronize()
            first = time.perf_counter() - t0
            ok = check(kernel, names, np_args, np_ret, work, ret)
            ms = timed(lambda: fn(*work), restore)
            say(f"{kernel:11} tiles={tiles} ms={ms:8.3f} first_s={first:6.2f} ok={ok}")
        os.environ["APPYC_TILES"] = "1"
        if a.configs:
            # Each candidate shape as the only one: the tuner then takes it without timing.
            tables = [v for n, v in vars(mod).items() if n.endswith("_tiles_tuning")]
            for config in mod._APPYC_TILE_CANDIDATES:
                for t in tables:
                    t.default, t.candidates = config, ()
                    t.chosen.clear()
                restore()
                ret = fn(*work)
                torch.cuda.synchronize()
                ok = check(kernel, names, np_args, np_ret, work, ret)
                ms = timed(lambda: fn(*work), restore)
                say(f"{kernel:11} tile {config} ms={ms:8.3f} ok={ok}")


def check(kernel, names, np_args, np_ret, work, ret):
    """Every written array and the return value against the NumPy math (NPBench's rule)."""
    spec = bench.KERNELS[kernel]
    pairs = [(np_args[names.index(w)], work[names.index(w)]) for w in spec["writes"]]
    if spec["nret"]:
        pairs.append((np_ret, ret))
    for e, g in pairs:
        g = g.detach().cpu().numpy() if isinstance(g, torch.Tensor) else np.asarray(g)
        rel = np.linalg.norm(g - e) / max(np.linalg.norm(e), 1e-300)
        if not (np.allclose(g, e, rtol=1e-5, atol=1e-8) or rel < 1e-5):
            return f"no (rel {rel:.1e})"
    return "yes"


if __name__ == "__main__":
    main()
