#!/usr/bin/env python3
"""The GPU check that 2-D temporal blocking waits for (issue 25): the generated Gluon kernels of
samples/stencils_2d.py (codegen/triton/gluon2d.rs), taken with APPYC_TEMPORAL_2D=1, against the
plain persistent kernels of the same module (the switch off) and against the unchanged source run
by NumPy, then timed at the `paper` sizes beside the plain kernel and the streaming-copy bound.

Correctness first: every blocked function (loop and tensor Jacobi-2D, 9-point, upwind) at odd
sizes that do not divide the 64 x 64 tiles and step counts that G = 2 does not divide, fp64
(bit-equal to the plain kernel: same association order per element) and fp32 (allclose); that
the blocked path really ran (the launcher's return value). Then Jacobi-2D (loop form) at
2800^2 x 1000 and 8192^2 x 100: blocked and plain, median of 5, against 32 N^2 bytes a step
over a 1 GiB copy's bandwidth (bench/temporal2d_gluon_probe.md measured 33.7 and 25.2 ms with
the probe's hand-written kernel on an H100).

    target/release/appyc samples/stencils_2d.py -o gen_blocked2d/stencils_2d.py   # here
    python3 bench/gpu_blocked2d_check.py --module gen_blocked2d/stencils_2d.py --out $OUT
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
FUNCS = ("jacobi_loops", "jacobi_slices", "nine_point", "upwind", "smooth_swap", "swap_no_copies")


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def args_for(func, a, b, m, n, steps):
    return (a, b, 0.3, m, n, steps) if func == "upwind" else (a, b, m, n, steps)


def run(mod, func, a0, b0, steps, blocked):
    os.environ["APPYC_TEMPORAL_2D"] = "1" if blocked else "0"
    a, b = a0.clone(), b0.clone()
    taken = []
    original = mod._appyc_blocked_2d

    def spy(*args, **kwargs):
        result = original(*args, **kwargs)
        taken.append(result is not None)
        return result

    mod._appyc_blocked_2d = spy
    try:
        getattr(mod, func)(*args_for(func, a, b, a.shape[0], a.shape[1], steps))
        torch.cuda.synchronize()
    finally:
        mod._appyc_blocked_2d = original
    return a, b, any(taken)


def median_ms(fn, reps=5):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", default="gen_blocked2d/stencils_2d.py")
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-timing", action="store_true")
    ap.add_argument("--no-check", action="store_true", help="timings only (another build's, say)")
    ap.add_argument("--crossover", type=lambda s: [int(x) for x in s.split(",")], default=[],
                    help="also time these N (1000 steps): where blocking starts to pay")
    ap.add_argument("--dtypes", default="float64,float32",
                    help="run these cases (a CUDA fault poisons the process: fp32 apart)")
    a = ap.parse_args()
    out = Path(a.out) if a.out else None
    log_lines, rows = [], []

    def log(line):
        print(line, flush=True)
        log_lines.append(line)

    mod = load(a.module, "blocked2d")
    mod._APPYC_BLOCKED_2D_MIN_BYTES = 0   # every size blocked when switched on: the crossover is measured here
    ref = load(ROOT / "samples" / "stencils_2d.py", "stencils_2d_numpy")
    rng = np.random.default_rng(11)
    log(f"device {torch.cuda.get_device_name(0)}")
    ok_all = True
    for func in () if a.no_check else FUNCS:
        for (m, n), steps, dtype in (((37, 45), 5, np.float64), ((130, 257), 7, np.float64),
                                     ((1001, 517), 11, np.float64), ((67, 190), 5, np.float32),
                                     ((130, 257), 7, np.float32), ((1001, 517), 11, np.float32)):
            if np.dtype(dtype).name not in a.dtypes.split(","):
                continue
            a_np = rng.standard_normal((m, n)).astype(dtype)
            b_np = rng.standard_normal((m, n)).astype(dtype)
            a0 = torch.tensor(a_np, device="cuda")
            b0 = torch.tensor(b_np, device="cuda")
            which = "plain"
            try:
                pa, pb, _ = run(mod, func, a0, b0, steps, blocked=False)
                which = "blocked"
                ga, gb, taken = run(mod, func, a0, b0, steps, blocked=True)
            except Exception as exc:  # one failing function must not hide the others
                log(f"{func} {m}x{n} x{steps} {np.dtype(dtype).name} ({which}): {type(exc).__name__}: {exc}")
                ok_all = False
                continue
            ra, rb = a_np.copy(), b_np.copy()
            getattr(ref, func)(*args_for(func, ra, rb, m, n, steps))
            tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
            equal = bool(torch.equal(ga, pa) and torch.equal(gb, pb))
            close = bool(np.allclose(ga.cpu().numpy(), ra, **tol) and np.allclose(gb.cpu().numpy(), rb, **tol))
            good = taken and close and (equal or dtype == np.float32)
            ok_all &= good
            log(f"{func:14s} {m}x{n} x{steps} {np.dtype(dtype).name}: blocked ran {taken}, "
                f"bit-equal to plain {equal}, NumPy {close} -> {'ok' if good else 'WRONG'}")
            rows.append({"func": func, "shape": [m, n], "steps": steps, "dtype": np.dtype(dtype).name,
                         "blocked": taken, "equal_plain": equal, "numpy": close, "ok": good})
    if not a.no_timing:
        n_copy = (1 << 30) // 8
        src = torch.rand(n_copy, dtype=torch.float64, device="cuda")
        dst = torch.empty_like(src)
        bw = 2 * n_copy * 8 / median_ms(lambda: dst.copy_(src), reps=10) / 1e6
        log(f"copy {bw:.0f} GB/s")
        timed = [("jacobi_loops", n, steps) for n, steps in ((2800, 1000), (8192, 100))]
        timed += [("jacobi_loops", n, 1000) for n in a.crossover]
        # smooth_swap: one stencil a step, boundary copies, `A, B = B, A` (the natural set's).
        timed += [("smooth_swap", 4096, 200), ("smooth_swap", 4096, 201)]
        timed = [(func, n, steps, dtype) for dtype in a.dtypes.split(",") for func, n, steps in timed]
        for func, n, steps, dtype in timed:
            dtype = getattr(torch, dtype)
            a0 = torch.rand((n, n), dtype=dtype, device="cuda")
            b0 = torch.rand((n, n), dtype=dtype, device="cuda")
            sweeps = 2 if func == "jacobi_loops" else 1   # a sweep reads and writes a point twice
            bound = 2 * a0.element_size() * sweeps * n * n * steps / bw / 1e6
            for blocked in (False, True):
                os.environ["APPYC_TEMPORAL_2D"] = "1" if blocked else "0"
                A, B = a0.clone(), b0.clone()
                # The plain kernel tunes over its first calls: settle first, as bench_npbench does.
                tables = [t for t in vars(mod).values() if type(t).__name__ == "_AppycTuning"]
                for _ in range(200):
                    try:
                        getattr(mod, func)(A, B, n, n, steps)
                    except Exception:
                        break
                    if not any(t.pending for t in tables):
                        break
                try:
                    ms = median_ms(lambda: getattr(mod, func)(A, B, n, n, steps))
                except Exception as exc:  # a failing blocked build must not hide the plain timing
                    log(f"{func} {n}^2 x {steps} blocked={blocked}: {type(exc).__name__}: {exc}")
                    ok_all = False
                    continue
                log(f"{func} {n}^2 x {steps} {str(dtype)[6:]} {'blocked' if blocked else 'plain  '}: "
                    f"{ms:9.3f} ms, {bound / ms:.2f}x the streaming bound")
                rows.append({"timing": True, "func": func, "n": n, "steps": steps, "dtype": str(dtype)[6:],
                             "blocked": blocked, "ms": ms, "x_bound": bound / ms})
    log("all correct" if ok_all else "SOME WRONG")
    if out:
        out.mkdir(parents=True, exist_ok=True)
        tag = a.dtypes.replace(",", "_")
        (out / f"blocked2d_check_{tag}.log").write_text("\n".join(log_lines) + "\n")
        (out / f"blocked2d_check_{tag}.json").write_text(json.dumps(rows, indent=1) + "\n")
    sys.exit(0 if ok_all else 1)


if __name__ == "__main__":
    main()
