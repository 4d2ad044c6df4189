#!/usr/bin/env python3
"""The GPU check float32 2-D temporal blocking waits for: the generated Gluon kernels of
samples/stencils_2d.py (codegen/triton/gluon2d.rs) run on float32 arrays, with the launcher's
float64-only gate bypassed, against the plain persistent kernel of the same module
(APPYC_TEMPORAL_2D=0).

Before the fix the float32 Gluon launch faulted with "misaligned address": Triton lowered the
shared-memory windows (element offsets j - 1, j + 1) to ldmatrix/stmatrix, whose rows must be
16-byte aligned. The windows now use a padded layout that Triton accesses element by element.

`_appyc_blocked_2d` refuses float32 (`a.dtype != torch.float64`); here its source is recompiled
in the module with float32 admitted too (nothing else changed) and its size threshold lowered to
0, so every case takes the blocked path (the launcher's return value says whether it did).
Float64 runs first, as a control (bit-equal to the plain kernel); then float32 at 67x190 x 5,
130x257 x 7 and 1001x517 x 11 for jacobi_loops, jacobi_slices, nine_point and upwind, within
float32 tolerance of the plain kernel. A CUDA fault poisons the process: the first one ends the
run (every later case would fail too). Tuning is off (APPYC_AUTOTUNE=0): seconds, not minutes.

    target/release/appyc samples/stencils_2d.py -o gen_fp32/stencils_2d.py   # here
    python3 bench/gpu_fp32_gluon_check.py --module gen_fp32/stencils_2d.py --out $OUT
"""
import argparse
import inspect
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("APPYC_AUTOTUNE", "0")

import importlib.util  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

FUNCS = ("jacobi_loops", "jacobi_slices", "nine_point", "upwind")
FP32_SIZES = (((67, 190), 5), ((130, 257), 7), ((1001, 517), 11))
FP64_SIZES = (((130, 257), 7),)
GATE = "a.dtype != torch.float64"


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def admit_float32(mod):
    """Recompiles the module's `_appyc_blocked_2d` with float32 admitted beside float64."""
    src = inspect.getsource(mod._appyc_blocked_2d)
    if src.count(GATE) != 1:
        raise SystemExit(f"the launcher's dtype gate `{GATE}` not found once: update this script")
    exec(compile(src.replace(GATE, "a.dtype not in (torch.float32, torch.float64)"),
                 f"<{mod.__name__}._appyc_blocked_2d, float32 admitted>", "exec"), vars(mod))
    mod._APPYC_BLOCKED_2D_MIN_BYTES = 0


def args_for(func, a, b, m, n, steps):
    return (a, b, 0.3, m, n, steps) if func == "upwind" else (a, b, m, n, steps)


def run(mod, func, a0, b0, steps, blocked):
    os.environ["APPYC_TEMPORAL_2D"] = "1" if blocked else "0"
    a, b = a0.clone(), b0.clone()
    taken = []
    launcher = mod._appyc_blocked_2d

    def spy(*args, **kwargs):
        result = launcher(*args, **kwargs)
        taken.append(result is not None)
        return result

    mod._appyc_blocked_2d = spy
    try:
        getattr(mod, func)(*args_for(func, a, b, a.shape[0], a.shape[1], steps))
        torch.cuda.synchronize()
    finally:
        mod._appyc_blocked_2d = launcher
    return a, b, any(taken)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", default="gen_fp32/stencils_2d.py")
    ap.add_argument("--out", default=None)
    opts = ap.parse_args()
    lines, rows = [], []

    def log(line):
        print(line, flush=True)
        lines.append(line)

    start = time.perf_counter()
    mod = load(opts.module, "fp32_gluon_check")
    admit_float32(mod)
    rng = np.random.default_rng(30)
    log(f"device {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    ok_all, faulted = True, False
    cases = [(f, s, t, np.float64) for f in FUNCS for s, t in FP64_SIZES] + \
            [(f, s, t, np.float32) for f in FUNCS for s, t in FP32_SIZES]
    for func, (m, n), steps, dtype in cases:
        name = np.dtype(dtype).name
        label = f"{func:14s} {m}x{n} x{steps} {name}"
        if faulted:
            log(f"{label}: skipped (an earlier CUDA fault)")
            continue
        a0 = torch.tensor(rng.standard_normal((m, n)).astype(dtype), device="cuda")
        b0 = torch.tensor(rng.standard_normal((m, n)).astype(dtype), device="cuda")
        which = "plain"
        try:
            pa, pb, _ = run(mod, func, a0, b0, steps, blocked=False)
            which = "blocked"
            ga, gb, taken = run(mod, func, a0, b0, steps, blocked=True)
        except Exception as exc:  # noqa: BLE001 - the failure is the finding
            log(f"{label} ({which}): {type(exc).__name__}: {str(exc).strip().splitlines()[0]} -> WRONG")
            rows.append({"func": func, "shape": [m, n], "steps": steps, "dtype": name,
                         "error": f"{which}: {type(exc).__name__}: {exc}", "ok": False})
            ok_all = False
            faulted = "CUDA" in str(exc) or "cuda" in type(exc).__name__.lower()
            continue
        equal = bool(torch.equal(ga, pa) and torch.equal(gb, pb))
        diff = max((ga - pa).abs().max().item(), (gb - pb).abs().max().item())
        tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=0, atol=0)
        close = bool(torch.allclose(ga, pa, **tol) and torch.allclose(gb, pb, **tol))
        good = taken and close
        ok_all &= good
        log(f"{label}: blocked ran {taken}, bit-equal {equal}, max |diff| {diff:.3g} "
            f"-> {'ok' if good else 'WRONG'}")
        rows.append({"func": func, "shape": [m, n], "steps": steps, "dtype": name, "blocked": taken,
                     "equal_plain": equal, "max_abs_diff": diff, "ok": good})
    log(f"{'all ok' if ok_all else 'SOME WRONG'} ({time.perf_counter() - start:.1f} s)")
    if opts.out:
        out = Path(opts.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "gpu_fp32_gluon_check.log").write_text("\n".join(lines) + "\n")
        (out / "gpu_fp32_gluon_check.json").write_text(json.dumps(rows, indent=1) + "\n")
    sys.exit(0 if ok_all else 1)


if __name__ == "__main__":
    main()
