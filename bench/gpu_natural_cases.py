"""Every difftest case of samples/natural_loops.py (tests/difftest/cases.py) on the GPU, in the
one-launch persistent form the interpreter never runs: each size's inputs, the generated module
on CUDA tensors against the unchanged source on NumPy copies (written arrays and the returned
values, the case's tolerances, types of returned values alike). Cases with strided views are
skipped (the difftests run them).

  here:    target/release/appyc samples/natural_loops.py -o gen_natural/natural_loops.py
  the GPU: python3 bench/gpu_natural_cases.py --module gen_natural/natural_loops.py
"""
import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "difftest"))
from cases import CASES, FP64_STRICT_TOL, View, default_tol  # noqa: E402


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def close(got, want, case):
    if isinstance(want, np.ndarray):
        got = np.asarray(got)
        tol = case.tol.get(want.dtype.name) or (FP64_STRICT_TOL if case.fp64_strict and want.dtype == np.float64
                                                 else default_tol(want.dtype))
        if tol is None:
            return np.array_equal(got, want)
        return np.allclose(got, want, rtol=tol[0], atol=tol[1], equal_nan=True)
    if isinstance(want, (tuple, list)):
        return len(got) == len(want) and all(close(g, w, case) for g, w in zip(got, want))
    # NumPy's run returns NumPy scalars (np.float64, np.bool_) where Python's types are the
    # module's: the kind must agree (a bool stays a bool, an int an int), not the class.
    kind = lambda v: "b" if isinstance(v, (bool, np.bool_)) else "i" if isinstance(v, (int, np.integer)) \
        else "f" if isinstance(v, (float, np.floating)) else type(v).__name__
    if kind(got) != kind(want):
        return False
    if kind(want) == "f":
        return abs(got - want) <= 1e-10 * max(1.0, abs(want))
    return got == want


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", required=True)
    ap.add_argument("--only", default="", help="function names, comma-separated")
    a = ap.parse_args()
    gen = load(a.module, "natural_loops_gen")
    src = load(ROOT / "samples" / "natural_loops.py", "natural_loops_src")
    only = set(filter(None, a.only.split(",")))
    failed = run = skipped = 0
    for case in CASES:
        if case.sample != "natural_loops" or (only and case.func not in only):
            continue
        for size in case.sizes:
            rng = np.random.default_rng(hash((case.id, str(size))) % (1 << 32))
            args = case.make(rng, size)
            if any(isinstance(x, View) for x in args):
                skipped += 1
                continue
            ref = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
            dev = [torch.from_numpy(x.copy()).cuda() if isinstance(x, np.ndarray) else x for x in args]
            t0 = time.perf_counter()
            try:
                want = getattr(src, case.func)(*ref)
                got = getattr(gen, case.func)(*dev)
                torch.cuda.synchronize()
                got = tuple(g.cpu().numpy() if isinstance(g, torch.Tensor) else g for g in got) \
                    if isinstance(got, tuple) else (got.cpu().numpy() if isinstance(got, torch.Tensor) else got)
                ok = close(got, want, case) and all(
                    close(d.cpu().numpy(), r, case) for d, r in zip(dev, ref) if isinstance(r, np.ndarray))
                error = ""
            except Exception as exc:  # noqa: BLE001 - the failure is the finding
                ok, error = False, f" {type(exc).__name__}: {str(exc)[:200]}"
            run += 1
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {case.id} size={size} ({time.perf_counter() - t0:.2f} s){error}",
                  flush=True)
    print(f"{run} run, {failed} failed, {skipped} skipped (strided views)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
