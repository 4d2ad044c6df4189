#!/usr/bin/env python3
"""NPBench kernels: appyc against CuPy, JAX (jit), torch.compile and eager torch, checked against
NumPy, and against the device's measured copy bandwidth and matmul throughput.

Two sets of sources (--set ours, natural or both, the default, for both steps):
  * ours: scripts/npbench/*.py, sixteen NPBench kernels annotated in the shapes appyc does best;
  * natural: scripts/npbench_natural/*.py, written from the math the way APPy users write
    them: loops with `#pragma parallel for` / `simd`, bare host statements and host scalars in
    time loops, `A, B = B, A` swaps, no pragma APPy 0.3 would not need. fdtd_2d, jacobi_2d,
    heat_3d and gemver (same signatures, sizes, inputs and peers as ours), and three of their
    own: wave_decay (two loops and a decaying host dt per step), relax_tol (a `while` to a
    tolerance with a max reduction and a swap) and smooth_swap (a 2-D swap loop).
Their rows are labelled `fdtd_2d` and `fdtd_2d (natural)` (case names fdtd_2d and
fdtd_2d.natural for --only), a section of the table and a panel of the chart each.

Two steps, because the GPU machine has no Rust toolchain:

  1. here, compile every annotated source twice (default, --mvl 256), ours into DIR and the
     natural set into DIR/natural/:
       python3 scripts/bench_npbench.py --generate gen_npbench [--set both]
  2. on the GPU machine (repo checkout with that directory in it):
       python3 scripts/bench_npbench.py --modules gen_npbench --set natural \
           --out bench/npbench_natural.md --png bench/npbench_natural.png
     (a run stops starting cases after --deadline, 420 s: run the sets, or --only groups of
     kernels, in separate calls and join their JSON files with
       python3 scripts/bench_npbench.py --merge A.json,B.json --out ... --png ...)

Per kernel (sizes: NPBench's `paper` preset, or `small` for a CPU smoke test):
  * inputs from a fixed seed, the NPBench dtypes (float64; softmax float32, floyd_warshall int32);
  * reference: the annotated source itself run on NumPy arrays (pragmas are comments), in a
    pool of background processes while the GPU cases run. At `paper` size, where a loop source
    would run for minutes to hours in plain Python, the reference is an independent whole-array
    NumPy expression of the math (MATH, NATURAL_MATH), and a natural source whose kernel has an
    ours source shares the ours reference (same inputs and outputs); at `small` size those
    sources are their own references, checked against the math or the ours source (rtol 1e-10)
    first;
  * each implementation in its own fresh process: appyc (default build; first call cold, with
    empty APPYC_CACHE_DIR and TRITON_CACHE_DIR), appyc again with the same cache directories
    (first call warm), appyc --mvl 256, CuPy, JAX (jax.jit, x64), torch.compile (a torch-op
    version written here; time loops compile one step and loop in Python), and eager torch (the
    same torch ops uncompiled; matrix products are cuBLAS through `@`);
  * limits, measured first in a fresh process: copy bandwidth and fp64/fp32 matmul throughput;
    the second table puts each kernel's steady state against the limit that bounds it by its
    flops and minimum bytes (`cost`), for appyc and the fastest peer;
  * correctness: every array the kernel writes and every value it returns (a swap loop's
    result is the array it returns; both buffers are checked by name too), after the first
    call, against NumPy: np.allclose(rtol=1e-5, atol=1e-8) or relative L2 error < 1e-5
    (NPBench's rule);
  * first call: wall time of the first call in the fresh process (compilation, tuning and one
    run), inputs already on the device;
  * steady state: median wall time of repeated calls, each between device synchronisations,
    with the written arrays restored from pristine copies before each call (not timed).
The processes run one at a time on the device; the next one starts (imports, inputs) while the
current one runs, and starts its measured part only when the device is free. A process that
fails or runs past --case-timeout is a row in the table, never a crash.

The markdown table has a section per set: the results, then steady-state speed-ups of appyc
against each peer and against the best peer, with a geometric mean per set (the natural set
also against appyc on the ours source of the same kernel); then the limits table for all rows.

`--device cpu --size small` runs the same flow on the CPU (appyc under TRITON_INTERPRET=1, with
float kernel arguments typed as a GPU launch types them; peers on their CPU backends where
installed): a check of the pipeline, not a benchmark, e.g.
    python3 scripts/bench_npbench.py --generate /tmp/gen_npb
    python3 scripts/bench_npbench.py --modules /tmp/gen_npb --device cpu --size small \
        --set natural --out /tmp/npb_small.md --png /tmp/npb_small.png
"""
import argparse
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = REPO / "scripts" / "npbench"
# Two sets of sources: "ours" (scripts/npbench/, shaped for appyc) and "natural"
# (scripts/npbench_natural/, written as APPy users write them). A natural kernel's case is named
# "<kernel>.natural" (files, --case) and labelled "<kernel> (natural)" (tables, chart).
SET_DIRS = {"ours": SOURCES, "natural": REPO / "scripts" / "npbench_natural"}
SETS = list(SET_DIRS)
SEED = 20261122
# appyc_default: appyc's module with APPYC_AUTOTUNE=0 (each kernel's default configuration);
# with appyc_mvl256 it is what the tuned build must never lose to.
IMPLS = ["appyc", "appyc_warm", "appyc_mvl256", "appyc_default", "cupy", "jax", "torch_compile",
         "torch"]
PEERS = ["appyc_mvl256", "appyc_default", "cupy", "jax", "torch_compile", "torch"]  # ratios
LABEL = {"appyc": "appyc", "appyc_warm": "appyc (warm cache)", "appyc_mvl256": "appyc --mvl 256",
         "appyc_default": "appyc untuned",
         "cupy": "CuPy", "jax": "JAX jit", "torch_compile": "torch.compile",
         "torch": "torch (eager)"}
RTOL, ATOL, L2TOL = 1e-5, 1e-8, 1e-5


# ================================================================== kernels: sizes and inputs
# Sizes: NPBench bench_info/<kernel>.json, `paper` preset; `small`: a few steps, odd extents.
def _mk_jacobi_1d(rng, TSTEPS, N):
    return [("TSTEPS", TSTEPS), ("A", rng.random(N)), ("B", rng.random(N))]


def _mk_jacobi_2d(rng, TSTEPS, N):
    return [("TSTEPS", TSTEPS), ("A", rng.random((N, N))), ("B", rng.random((N, N)))]


def _mk_heat_3d(rng, TSTEPS, N):
    return [("TSTEPS", TSTEPS), ("A", rng.random((N, N, N))), ("B", rng.random((N, N, N)))]


def _mk_fdtd_2d(rng, TMAX, NX, NY):
    return [("TMAX", TMAX), ("ex", rng.random((NX, NY))), ("ey", rng.random((NX, NY))),
            ("hz", rng.random((NX, NY))), ("_fict_", rng.random(TMAX))]


def _mk_gemver(rng, N):
    vec = lambda: rng.random(N)  # noqa: E731
    return [("alpha", 1.5), ("beta", 1.2), ("A", rng.random((N, N))), ("u1", vec()),
            ("v1", vec()), ("u2", vec()), ("v2", vec()), ("w", vec()), ("x", vec()),
            ("y", vec()), ("z", vec())]


def _mk_gesummv(rng, N):
    return [("alpha", 1.5), ("beta", 1.2), ("A", rng.random((N, N))),
            ("B", rng.random((N, N))), ("x", rng.random(N))]


def _mk_syrk(rng, M, N):
    return [("alpha", 1.5), ("beta", 1.2), ("C", rng.random((N, N))), ("A", rng.random((N, M)))]


def _mk_syr2k(rng, M, N):
    return [("alpha", 1.5), ("beta", 1.2), ("C", rng.random((N, N))),
            ("A", rng.random((N, M))), ("B", rng.random((N, M)))]


def _mk_gemm(rng, NI, NJ, NK):
    return [("alpha", 1.5), ("beta", 1.2), ("C", rng.random((NI, NJ))),
            ("A", rng.random((NI, NK))), ("B", rng.random((NK, NJ)))]


def _mk_trmm(rng, M, N):
    return [("alpha", 1.5), ("A", rng.random((M, M))), ("B", rng.random((M, N)))]


def _mk_symm(rng, M, N):
    return [("alpha", 1.5), ("beta", 1.2), ("C", rng.random((M, N))),
            ("A", rng.random((M, M))), ("B", rng.random((M, N)))]


def _mk_covariance(rng, M, N):
    return [("M", M), ("float_n", float(N)), ("data", rng.random((N, M)))]


def _mk_floyd_warshall(rng, N):
    import numpy as np
    path = rng.integers(1, 10, size=(N, N), dtype=np.int32)
    path[rng.random((N, N)) < 0.3] = 999  # missing edges, as in PolyBench's initialisation
    np.fill_diagonal(path, 0)
    return [("path", path)]


def _mk_gramschmidt(rng, M, N):
    return [("A", rng.random((M, N)))]


def _mk_softmax(rng, N, H, SM):
    import numpy as np
    return [("x", rng.random((N, H, SM, SM), dtype=np.float32))]


def _mk_go_fast(rng, N):
    return [("a", rng.random((N, N)))]


def _mk_wave_decay(rng, T, N):
    return [("T", T), ("u", rng.random(N)), ("v", rng.random(N) - 0.5), ("dt", 0.5),
            ("decay", 0.999)]


def _relax_sweep(a):
    """One sweep of relax_tol from a (ends fixed): the new array and its largest change."""
    import numpy as np
    b = a.copy()
    b[1:-1] = 0.25 * a[:-2] + 0.5 * a[1:-1] + 0.25 * a[2:]
    return b, float(np.max(np.abs(b[1:-1] - a[1:-1])))


def _mk_relax_tol(rng, N, iters):
    """tol strictly between the largest changes of sweeps iters-1 and iters, so the loop stops
    on the tolerance after exactly `iters` sweeps (max_iter = 2 * iters is only a cap). The
    largest change never grows (each sweep averages the previous change with non-negative
    weights), and the gap between two sweeps (about 1e-4 relative at 3000) is far above
    rounding, so every correct implementation stops at the same sweep."""
    import numpy as np
    A = rng.random(N)
    a, diffs = A, []
    for _ in range(iters):
        a, d = _relax_sweep(a)
        diffs.append(d)
    assert diffs[-2] > diffs[-1] > 0.0, diffs[-2:]
    tol = float(np.sqrt(diffs[-2] * diffs[-1]))
    return [("A", A), ("B", A.copy()), ("tol", tol), ("max_iter", 2 * iters)]


def _mk_smooth_swap(rng, T, M, N):
    return [("T", T), ("A", rng.random((M, N))), ("B", rng.random((M, N)))]


# writes: arrays the kernel updates in place; nret: number of returned arrays (checked as ret0..)
KERNELS = {
    "jacobi_1d": dict(make=_mk_jacobi_1d, writes=["A", "B"], nret=0,
                      paper=dict(TSTEPS=4000, N=32000), small=dict(TSTEPS=4, N=67)),
    "jacobi_2d": dict(make=_mk_jacobi_2d, writes=["A", "B"], nret=0,
                      paper=dict(TSTEPS=1000, N=2800), small=dict(TSTEPS=3, N=19)),
    "heat_3d": dict(make=_mk_heat_3d, writes=["A", "B"], nret=0,
                    paper=dict(TSTEPS=500, N=120), small=dict(TSTEPS=3, N=10)),
    "fdtd_2d": dict(make=_mk_fdtd_2d, writes=["ex", "ey", "hz"], nret=0,
                    paper=dict(TMAX=500, NX=1000, NY=1200), small=dict(TMAX=3, NX=13, NY=17)),
    "gemver": dict(make=_mk_gemver, writes=["A", "w", "x"], nret=0,
                   paper=dict(N=8000), small=dict(N=37)),
    "gesummv": dict(make=_mk_gesummv, writes=[], nret=1, paper=dict(N=11200), small=dict(N=41)),
    "syrk": dict(make=_mk_syrk, writes=["C"], nret=0,
                 paper=dict(M=1000, N=1200), small=dict(M=11, N=13)),
    "syr2k": dict(make=_mk_syr2k, writes=["C"], nret=0,
                  paper=dict(M=1000, N=1200), small=dict(M=11, N=13)),
    "gemm": dict(make=_mk_gemm, writes=["C"], nret=0,
                 paper=dict(NI=2000, NJ=2300, NK=2600), small=dict(NI=13, NJ=17, NK=11)),
    "trmm": dict(make=_mk_trmm, writes=["B"], nret=0,
                 paper=dict(M=1000, N=1200), small=dict(M=13, N=11)),
    "symm": dict(make=_mk_symm, writes=["C"], nret=0,
                 paper=dict(M=1000, N=1200), small=dict(M=13, N=11)),
    "covariance": dict(make=_mk_covariance, writes=["data"], nret=1,
                       paper=dict(M=1200, N=1400), small=dict(M=11, N=13)),
    "floyd_warshall": dict(make=_mk_floyd_warshall, writes=["path"], nret=0,
                           paper=dict(N=2800), small=dict(N=17)),
    "gramschmidt": dict(make=_mk_gramschmidt, writes=["A"], nret=2,
                        paper=dict(M=240, N=200), small=dict(M=14, N=11)),
    "softmax": dict(make=_mk_softmax, writes=[], nret=1,
                    paper=dict(N=64, H=16, SM=512), small=dict(N=2, H=3, SM=7)),
    "go_fast": dict(make=_mk_go_fast, writes=[], nret=1, paper=dict(N=12500), small=dict(N=33)),
    # Only in the natural set. wave_decay returns its last dt, relax_tol its sweep count;
    # smooth_swap returns the array `A` names after the swaps (its odd `small` T leaves it in
    # the caller's B), and the caller's A and B are checked as well.
    "wave_decay": dict(make=_mk_wave_decay, writes=["u", "v"], nret=1,
                       paper=dict(T=1000, N=2 ** 20), small=dict(T=5, N=101)),
    "relax_tol": dict(make=_mk_relax_tol, writes=["A", "B"], nret=1,
                      paper=dict(N=2 ** 16, iters=3000), small=dict(N=67, iters=12)),
    "smooth_swap": dict(make=_mk_smooth_swap, writes=["A", "B"], nret=1,
                        paper=dict(T=200, M=4096, N=4096), small=dict(T=3, M=19, N=23)),
}
# The kernels of each set: those with a source in the set's directory, in KERNELS order.
SET_KERNELS = {st: [k for k in KERNELS if (d / f"{k}.py").exists()] for st, d in SET_DIRS.items()}


def case_name(st, k):
    return k if st == "ours" else f"{k}.{st}"


def split_case(case):
    """(set, kernel) of a case name."""
    k, _, st = case.partition(".")
    return (st or "ours"), k


def case_label(case):
    st, k = split_case(case)
    return k if st == "ours" else f"{k} ({st})"


def all_cases(sets=SETS):
    return [case_name(st, k) for st in sets for k in SET_KERNELS[st]]
# Longest NumPy references first (and the large-output ones early), so that the reference
# pool is done before the device cases need it.
REF_ORDER = ["gemm", "jacobi_2d", "smooth_swap", "floyd_warshall", "softmax", "go_fast", "heat_3d",
             "covariance", "symm", "syr2k", "trmm", "syrk", "gemver", "wave_decay", "gesummv",
             "fdtd_2d", "relax_tol", "jacobi_1d", "gramschmidt"]
# Device order: kernels with large outputs first (their checks run in the background while the
# others run); those whose appyc first call may run into the time cap last.
RUN_ORDER = ["softmax", "go_fast", "gesummv", "gemver", "covariance", "syrk", "syr2k", "trmm",
             "symm", "gemm", "smooth_swap", "wave_decay", "relax_tol", "jacobi_1d", "jacobi_2d",
             "heat_3d", "fdtd_2d", "floyd_warshall", "gramschmidt"]


def ref_order(case):
    st, k = split_case(case)
    return REF_ORDER.index(k), SETS.index(st)


def run_order(case):  # one set after the other
    st, k = split_case(case)
    return SETS.index(st), RUN_ORDER.index(k)


# ================================================================== the math, in NumPy
# Independent whole-array NumPy expressions of the kernels whose annotated sources are scalar
# loops (the shapes appyc's matrix-product pass takes). Those sources would run for hours in
# plain Python at the `paper` sizes, so there the reference is this math; at `small` sizes the
# reference run checks the annotated source against it (and tests/difftest/test_npbench_math.py
# does too), so the two cannot drift apart. Same signatures and in-place writes as the kernels.
def _lower(C, new):
    import numpy as np
    C[...] = np.where(np.tri(*C.shape, dtype=bool), new, C)


def _math_gemm(alpha, beta, C, A, B):
    C[...] = alpha * A @ B + beta * C


def _math_syrk(alpha, beta, C, A):
    _lower(C, alpha * A @ A.T + beta * C)


def _math_syr2k(alpha, beta, C, A, B):
    _lower(C, alpha * (A @ B.T + B @ A.T) + beta * C)


def _math_trmm(alpha, A, B):
    import numpy as np
    B[...] = alpha * (B + np.tril(A, -1).T @ B)


def _math_symm(alpha, beta, C, A, B):
    import numpy as np
    C[...] = alpha * (np.tril(A) + np.tril(A, -1).T) @ B + beta * C


def _math_covariance(M, float_n, data):
    data -= data.mean(axis=0)
    return data.T @ data / (float_n - 1.0)


MATH = {"gemm": _math_gemm, "syrk": _math_syrk, "syr2k": _math_syr2k, "trmm": _math_trmm,
        "symm": _math_symm, "covariance": _math_covariance}


# The natural set's own kernels, likewise: their loop sources would run for minutes to hours in
# plain Python at `paper` size, so there the reference is this math; at `small` the reference
# is the source, checked against it.
def _math_wave_decay(T, u, v, dt, decay):
    for _ in range(T):
        v[1:-1] = v[1:-1] + dt * (u[:-2] - 2.0 * u[1:-1] + u[2:])
        u[:] = u + dt * v
        dt = dt * decay
    return dt


def _math_relax_tol(A, B, tol, max_iter):
    diff, it = tol + 1.0, 0
    while diff > tol and it < max_iter:
        B[1:-1] = 0.25 * A[:-2] + 0.5 * A[1:-1] + 0.25 * A[2:]
        diff = abs(B[1:-1] - A[1:-1]).max()
        A, B = B, A
        it += 1
    return it


def _math_smooth_swap(T, A, B):
    for _ in range(T):
        B[1:-1, 1:-1] = _smooth5(A)
        B[[0, -1], :] = A[[0, -1], :]
        B[:, [0, -1]] = A[:, [0, -1]]
        A, B = B, A
    return A


NATURAL_MATH = {"wave_decay": _math_wave_decay, "relax_tol": _math_relax_tol,
                "smooth_swap": _math_smooth_swap}


# ================================================================== cost model: flops, bytes
# Per kernel, from the math (not from any implementation): the floating-point operations it
# needs (a symmetric or triangular result counted once: syrk, syr2k, covariance) and the fewest
# bytes it must move to and from device memory: every array it reads read once and every array
# it writes written once, per time step or sweep for the time-loop kernels (jacobi, heat, fdtd,
# floyd_warshall), whose arrays are overwritten step after step. An array that stays in the L2
# cache between sweeps can beat that model (above 100 %): it is a yardstick, not a bound.
# elem: bytes per element; peak: which measured matmul throughput bounds its flops (None: no
# float peak, the kernel is taken as bandwidth-bound).
def cost(kernel, d):
    w = 8
    T = lambda n: n * (n + 1) // 2  # noqa: E731  (a triangle with its diagonal)
    if kernel == "jacobi_1d":
        return 2 * 3 * (d["N"] - 2) * 2 * d["TSTEPS"], 2 * 2 * d["N"] * w * d["TSTEPS"]
    if kernel == "jacobi_2d":
        return 2 * 5 * (d["N"] - 2) ** 2 * d["TSTEPS"], 2 * 2 * d["N"] ** 2 * w * d["TSTEPS"]
    if kernel == "heat_3d":
        return 2 * 15 * (d["N"] - 2) ** 3 * d["TSTEPS"], 2 * 2 * d["N"] ** 3 * w * d["TSTEPS"]
    if kernel == "fdtd_2d":
        n = d["NX"] * d["NY"]
        return 11 * n * d["TMAX"], 6 * n * w * d["TMAX"]
    if kernel == "gemver":  # A updated, read again for w = A x: read, write, read
        N = d["N"]
        return 8 * N * N + 6 * N, (3 * N * N + 10 * N) * w
    if kernel == "gesummv":
        N = d["N"]
        return 4 * N * N + 3 * N, (2 * N * N + 2 * N) * w
    if kernel == "syrk":
        M, N = d["M"], d["N"]
        return (2 * M + 3) * T(N), (N * M + 2 * T(N)) * w
    if kernel == "syr2k":
        M, N = d["M"], d["N"]
        return (4 * M + 3) * T(N), (2 * N * M + 2 * T(N)) * w
    if kernel == "gemm":
        NI, NJ, NK = d["NI"], d["NJ"], d["NK"]
        return (2 * NK + 3) * NI * NJ, (NI * NK + NK * NJ + 2 * NI * NJ) * w
    if kernel == "trmm":
        M, N = d["M"], d["N"]
        return N * M * (M - 1) + 2 * M * N, (M * (M - 1) // 2 + 2 * M * N) * w
    if kernel == "symm":
        M, N = d["M"], d["N"]
        return (2 * M + 3) * M * N, (T(M) + 3 * M * N) * w
    if kernel == "covariance":  # data read once, centred data and cov written once
        M, N = d["M"], d["N"]
        return 2 * N * M + M + (2 * N + 1) * T(M), (2 * N * M + M * M) * w
    if kernel == "floyd_warshall":  # int32 adds and mins; path read and written per k
        N = d["N"]
        return 2 * N ** 3, 2 * N * N * 4 * N
    if kernel == "gramschmidt":  # A read and written, Q and R written
        M, N = d["M"], d["N"]
        return 3 * M * N + 2 * M * N * (N - 1) + N, (3 * M * N + N * N) * w
    if kernel == "softmax":  # max, subtract, exp, sum, divide per element; float32
        n = d["N"] * d["H"] * d["SM"] * d["SM"]
        return 5 * n, 2 * n * 4
    if kernel == "go_fast":
        N = d["N"]
        return N * N + 2 * N, 2 * N * N * w
    if kernel == "wave_decay":  # u and v read and written per step
        return (5 * (d["N"] - 2) + 2 * d["N"]) * d["T"], 4 * d["N"] * w * d["T"]
    if kernel == "relax_tol":  # A read, B written per sweep; `iters` sweeps (see _mk_relax_tol)
        return 7 * (d["N"] - 2) * d["iters"], 2 * d["N"] * w * d["iters"]
    if kernel == "smooth_swap":  # A read, B written per step
        n = d["M"] * d["N"]
        return 5 * (d["M"] - 2) * (d["N"] - 2) * d["T"], 2 * n * w * d["T"]
    raise KeyError(kernel)


PEAK = {"softmax": "fp32", "floyd_warshall": None}  # the rest: fp64


def make_inputs(kernel, size):
    import numpy as np
    spec = KERNELS[kernel]
    return spec["make"](np.random.default_rng(SEED), **spec[size])


def size_text(kernel, size):
    return ", ".join(f"{k}={v}" for k, v in KERNELS[kernel][size].items())


# ================================================================== peers: CuPy
# The same computations with CuPy's NumPy-compatible operators (eager; time loops in Python).
def cupy_impl(kernel):
    import cupy as cp

    def jacobi_1d(TSTEPS, A, B):
        for _ in range(TSTEPS):
            B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
            A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])

    def jacobi_2d(TSTEPS, A, B):
        for _ in range(TSTEPS):
            B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]
                                   + A[2:, 1:-1] + A[:-2, 1:-1])
            A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:]
                                   + B[2:, 1:-1] + B[:-2, 1:-1])

    def heat_3d(TSTEPS, A, B):
        for _ in range(TSTEPS):
            B[1:-1, 1:-1, 1:-1] = _heat(A)
            A[1:-1, 1:-1, 1:-1] = _heat(B)

    def fdtd_2d(TMAX, ex, ey, hz, fict):
        for t in range(TMAX):
            _fdtd_step(ex, ey, hz, fict[t])

    def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
        A += cp.outer(u1, v1) + cp.outer(u2, v2)
        x += beta * (y @ A) + z
        w += alpha * (A @ x)

    def gesummv(alpha, beta, A, B, x):
        return alpha * (A @ x) + beta * (B @ x)

    def syrk(alpha, beta, C, A):
        C[...] = cp.tril(alpha * (A @ A.T) + beta * C) + cp.triu(C, 1)

    def syr2k(alpha, beta, C, A, B):
        C[...] = cp.tril(alpha * (A @ B.T + B @ A.T) + beta * C) + cp.triu(C, 1)

    def gemm(alpha, beta, C, A, B):
        C[...] = alpha * (A @ B) + beta * C

    def trmm(alpha, A, B):
        B[...] = alpha * (B + cp.tril(A, -1).T @ B)

    def symm(alpha, beta, C, A, B):
        C[...] = alpha * ((cp.tril(A) + cp.tril(A, -1).T) @ B) + beta * C

    def covariance(M, float_n, data):
        data -= data.mean(axis=0)
        return (data.T @ data) / (float_n - 1.0)

    def floyd_warshall(path):
        for k in range(path.shape[0]):
            cp.minimum(path, path[:, k, None] + path[None, k, :], out=path)

    def gramschmidt(A):
        M, N = A.shape
        Q, R = cp.zeros_like(A), cp.zeros((N, N), dtype=A.dtype)
        for k in range(N):
            R[k, k] = cp.sqrt(A[:, k] @ A[:, k])
            Q[:, k] = A[:, k] / R[k, k]
            R[k, k + 1:] = Q[:, k] @ A[:, k + 1:]
            A[:, k + 1:] -= cp.outer(Q[:, k], R[k, k + 1:])
        return Q, R

    def softmax(x):
        e = cp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def go_fast(a):
        return a + cp.tanh(cp.diagonal(a)).sum()

    def wave_decay(T, u, v, dt, decay):
        for _ in range(T):
            _wave_step(u, v, dt)
            dt = dt * decay
        return dt

    def relax_tol(A, B, tol, max_iter):
        diff, it = tol + 1.0, 0
        while diff > tol and it < max_iter:
            diff = float(_relax_step(A, B))  # the host reads the change every sweep
            A, B = B, A
            it += 1
        return it

    def smooth_swap(T, A, B):
        for _ in range(T):
            _smooth_step(A, B)
            A, B = B, A
        return A

    return locals()[kernel]


def _wave_step(u, v, dt):  # shared by CuPy and torch
    v[1:-1] += dt * (u[:-2] - 2.0 * u[1:-1] + u[2:])
    u += dt * v


def _relax_step(A, B):  # shared by CuPy and torch: the sweep and its largest change
    B[1:-1] = 0.25 * A[:-2] + 0.5 * A[1:-1] + 0.25 * A[2:]
    return abs(B[1:-1] - A[1:-1]).max()


def _smooth5(A):  # shared by NumPy (math), CuPy, torch and JAX
    return 0.2 * (A[1:-1, 1:-1] + A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])


def _smooth_step(A, B):  # shared by CuPy and torch
    B[1:-1, 1:-1] = _smooth5(A)
    B[0, :] = A[0, :]
    B[-1, :] = A[-1, :]
    B[:, 0] = A[:, 0]
    B[:, -1] = A[:, -1]


def _heat(A):  # shared by CuPy and torch: plain slicing arithmetic
    c = A[1:-1, 1:-1, 1:-1]
    return (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * c + A[:-2, 1:-1, 1:-1])
            + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * c + A[1:-1, :-2, 1:-1])
            + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * c + A[1:-1, 1:-1, :-2]) + c)


def _fdtd_step(ex, ey, hz, f):  # shared by CuPy and torch
    ey[0, :] = f
    ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
    ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
    hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


# ================================================================== peers: torch.compile, torch
# Whole kernels are compiled where they are loop-free; time loops compile one step (dynamo
# would unroll thousands of steps) and call it from Python, as a torch user would. Eager torch
# (compiled=False) runs the same torch ops uncompiled (matrix products: cuBLAS through `@`);
# only gramschmidt differs: eager, it slices (the masked full-width step exists for dynamo).
def torch_impl(kernel, compiled=True):
    import torch
    if compiled:
        import torch._dynamo  # noqa: F401  (library import at start-up, as for the other peers:
        import torch._inductor.compile_fx  # noqa: F401  the first call measures compiling)
        tc = torch.compile
    else:
        tc = lambda f: f  # noqa: E731

    def j1_step(A, B):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])

    def j2_step(A, B):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]
                               + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:]
                               + B[2:, 1:-1] + B[:-2, 1:-1])

    def heat_step(A, B):
        B[1:-1, 1:-1, 1:-1] = _heat(A)
        A[1:-1, 1:-1, 1:-1] = _heat(B)

    def fdtd_step(ex, ey, hz, fict, t):  # t an int: one recompile makes it dynamic
        _fdtd_step(ex, ey, hz, fict[t])

    def fw_step(path, k):
        path.copy_(torch.minimum(path, path[:, k, None] + path[None, k, :]))

    def gs_step(A, Q, R, k):
        # Full-width, masked: shapes do not change with k, so one compiled graph serves all k.
        N = A.shape[1]
        rkk = torch.sqrt(A[:, k] @ A[:, k])
        q = A[:, k] / rkk
        Q[:, k] = q
        r = torch.where(torch.arange(N, device=A.device) > k, q @ A, 0.0)
        R[k, :] = r
        R[k, k] = rkk
        A.sub_(torch.outer(q, r))

    steps = {"j1": tc(j1_step), "j2": tc(j2_step), "heat": tc(heat_step),
             "fdtd": tc(fdtd_step), "fw": tc(fw_step), "gs": tc(gs_step),
             "wave": tc(_wave_step), "relax": tc(_relax_step), "smooth": tc(_smooth_step)}

    def jacobi_1d(TSTEPS, A, B):
        for _ in range(TSTEPS):
            steps["j1"](A, B)

    def jacobi_2d(TSTEPS, A, B):
        for _ in range(TSTEPS):
            steps["j2"](A, B)

    def heat_3d(TSTEPS, A, B):
        for _ in range(TSTEPS):
            steps["heat"](A, B)

    def fdtd_2d(TMAX, ex, ey, hz, fict):
        for t in range(TMAX):
            steps["fdtd"](ex, ey, hz, fict, t)

    @tc
    def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
        A += torch.outer(u1, v1) + torch.outer(u2, v2)
        x += beta * (y @ A) + z
        w += alpha * (A @ x)

    @tc
    def gesummv(alpha, beta, A, B, x):
        return alpha * (A @ x) + beta * (B @ x)

    @tc
    def syrk(alpha, beta, C, A):
        C.copy_(torch.tril(alpha * (A @ A.T) + beta * C) + torch.triu(C, 1))

    @tc
    def syr2k(alpha, beta, C, A, B):
        C.copy_(torch.tril(alpha * (A @ B.T + B @ A.T) + beta * C) + torch.triu(C, 1))

    @tc
    def gemm(alpha, beta, C, A, B):
        C.copy_(alpha * (A @ B) + beta * C)

    @tc
    def trmm(alpha, A, B):
        B.copy_(alpha * (B + torch.tril(A, -1).T @ B))

    @tc
    def symm(alpha, beta, C, A, B):
        C.copy_(alpha * ((torch.tril(A) + torch.tril(A, -1).T) @ B) + beta * C)

    @tc
    def covariance(M, float_n, data):
        data.sub_(data.mean(dim=0))
        return (data.T @ data) / (float_n - 1.0)

    def floyd_warshall(path):
        for k in range(path.shape[0]):
            if compiled:
                steps["fw"](path, k)
            else:
                torch.minimum(path, path[:, k, None] + path[None, k, :], out=path)

    def gramschmidt(A):
        M, N = A.shape
        Q = torch.zeros_like(A)
        R = torch.zeros((N, N), dtype=A.dtype, device=A.device)
        for k in range(N):
            if compiled:
                steps["gs"](A, Q, R, k)
                continue
            R[k, k] = torch.sqrt(A[:, k] @ A[:, k])
            Q[:, k] = A[:, k] / R[k, k]
            R[k, k + 1:] = Q[:, k] @ A[:, k + 1:]
            A[:, k + 1:] -= torch.outer(Q[:, k], R[k, k + 1:])
        return Q, R

    @tc
    def softmax(x):
        e = torch.exp(x - x.amax(dim=-1, keepdim=True))
        return e / e.sum(dim=-1, keepdim=True)

    @tc
    def go_fast(a):
        return a + torch.tanh(torch.diagonal(a)).sum()

    # The natural set's own kernels: one step compiled, the loop in Python (dt a Python float,
    # which dynamo takes as a symbolic input rather than recompiling per value).
    def wave_decay(T, u, v, dt, decay):
        for _ in range(T):
            steps["wave"](u, v, dt)
            dt = dt * decay
        return dt

    def relax_tol(A, B, tol, max_iter):
        diff, it = tol + 1.0, 0
        while diff > tol and it < max_iter:
            diff = steps["relax"](A, B).item()  # the host reads the change every sweep
            A, B = B, A
            it += 1
        return it

    def smooth_swap(T, A, B):
        for _ in range(T):
            steps["smooth"](A, B)
            A, B = B, A
        return A

    return locals()[kernel]


# ================================================================== peers: JAX
# Functional versions (JAX arrays are immutable): they return the arrays the kernel writes, in
# the order of KERNELS[k]["writes"], then the returned values. Time loops are lax.fori_loop.
def jax_impl(kernel):
    import jax
    import jax.numpy as jnp
    from jax import lax

    def jacobi_1d(TSTEPS, A, B):
        def step(_, AB):
            A, B = AB
            B = B.at[1:-1].set(0.33333 * (A[:-2] + A[1:-1] + A[2:]))
            A = A.at[1:-1].set(0.33333 * (B[:-2] + B[1:-1] + B[2:]))
            return A, B
        return lax.fori_loop(0, TSTEPS, step, (A, B))

    def jacobi_2d(TSTEPS, A, B):
        def five(X):
            return 0.2 * (X[1:-1, 1:-1] + X[1:-1, :-2] + X[1:-1, 2:] + X[2:, 1:-1] + X[:-2, 1:-1])

        def step(_, AB):
            A, B = AB
            B = B.at[1:-1, 1:-1].set(five(A))
            A = A.at[1:-1, 1:-1].set(five(B))
            return A, B
        return lax.fori_loop(0, TSTEPS, step, (A, B))

    def heat_3d(TSTEPS, A, B):
        def step(_, AB):
            A, B = AB
            B = B.at[1:-1, 1:-1, 1:-1].set(_heat(A))
            A = A.at[1:-1, 1:-1, 1:-1].set(_heat(B))
            return A, B
        return lax.fori_loop(0, TSTEPS, step, (A, B))

    def fdtd_2d(TMAX, ex, ey, hz, _fict_):
        def step(t, st):
            ex, ey, hz = st
            ey = ey.at[0, :].set(_fict_[t])
            ey = ey.at[1:, :].add(-0.5 * (hz[1:, :] - hz[:-1, :]))
            ex = ex.at[:, 1:].add(-0.5 * (hz[:, 1:] - hz[:, :-1]))
            hz = hz.at[:-1, :-1].add(-0.7 * (ex[:-1, 1:] - ex[:-1, :-1]
                                             + ey[1:, :-1] - ey[:-1, :-1]))
            return ex, ey, hz
        return lax.fori_loop(0, TMAX, step, (ex, ey, hz))

    def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
        A = A + jnp.outer(u1, v1) + jnp.outer(u2, v2)
        x = x + beta * (y @ A) + z
        w = w + alpha * (A @ x)
        return A, w, x

    def gesummv(alpha, beta, A, B, x):
        return (alpha * (A @ x) + beta * (B @ x),)

    def syrk(alpha, beta, C, A):
        return (jnp.tril(alpha * (A @ A.T) + beta * C) + jnp.triu(C, 1),)

    def syr2k(alpha, beta, C, A, B):
        return (jnp.tril(alpha * (A @ B.T + B @ A.T) + beta * C) + jnp.triu(C, 1),)

    def gemm(alpha, beta, C, A, B):
        return (alpha * (A @ B) + beta * C,)

    def trmm(alpha, A, B):
        return (alpha * (B + jnp.tril(A, -1).T @ B),)

    def symm(alpha, beta, C, A, B):
        return (alpha * ((jnp.tril(A) + jnp.tril(A, -1).T) @ B) + beta * C,)

    def covariance(M, float_n, data):
        data = data - data.mean(axis=0)
        return data, (data.T @ data) / (float_n - 1.0)

    def floyd_warshall(path):
        def step(k, p):
            return jnp.minimum(p, p[:, k][:, None] + p[k, :][None, :])
        return (lax.fori_loop(0, path.shape[0], step, path),)

    def gramschmidt(A):
        M, N = A.shape
        cols = jnp.arange(N)

        def step(k, st):
            A, Q, R = st
            rkk = jnp.sqrt(A[:, k] @ A[:, k])
            q = A[:, k] / rkk
            r = jnp.where(cols > k, q @ A, 0.0)
            return A - jnp.outer(q, r), Q.at[:, k].set(q), R.at[k, :].set(r).at[k, k].set(rkk)
        return lax.fori_loop(0, N, step, (A, jnp.zeros_like(A), jnp.zeros((N, N), A.dtype)))

    def softmax(x):
        e = jnp.exp(x - x.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True),)

    def go_fast(a):
        return (a + jnp.tanh(jnp.diagonal(a)).sum(),)

    def wave_decay(T, u, v, dt, decay):
        def step(_, st):
            u, v, dt = st
            v = v.at[1:-1].add(dt * (u[:-2] - 2.0 * u[1:-1] + u[2:]))
            return u + dt * v, v, dt * decay
        return lax.fori_loop(0, T, step, (u, v, jnp.asarray(dt, jnp.float64)))

    def relax_tol(A, B, tol, max_iter):
        def cond(st):
            return (st[2] > tol) & (st[3] < max_iter)

        def body(st):
            A, B, _, it = st
            B = B.at[1:-1].set(0.25 * A[:-2] + 0.5 * A[1:-1] + 0.25 * A[2:])
            return B, A, jnp.max(jnp.abs(B[1:-1] - A[1:-1])), it + 1
        a, b, _, it = lax.while_loop(cond, body, (A, B, jnp.asarray(tol + 1.0, jnp.float64),
                                                  jnp.asarray(0, jnp.int64)))
        even = it % 2 == 0  # the caller's A is the carry's A after an even number of swaps
        return jnp.where(even, a, b), jnp.where(even, b, a), it

    def smooth_swap(T, A, B):
        def step(_, AB):
            A, B = AB
            B = B.at[1:-1, 1:-1].set(_smooth5(A))
            B = B.at[0, :].set(A[0, :]).at[-1, :].set(A[-1, :])
            B = B.at[:, 0].set(A[:, 0]).at[:, -1].set(A[:, -1])
            return B, A
        a, b = lax.fori_loop(0, T, step, (A, B))
        return (a, b, a) if T % 2 == 0 else (b, a, a)  # caller's A, caller's B, the result

    return jax, locals()[kernel]


# ================================================================== one case, in its own process
class Backend:
    """Device arrays of one framework: upload, download, synchronise, restore."""

    def __init__(self, impl, device):
        self.impl, self.device = impl, device
        if impl == "cupy":
            import cupy
            self.cp = cupy
        elif impl == "jax":
            import jax
            jax.config.update("jax_enable_x64", True)
            self.jax = jax
            self.dev = jax.devices("gpu" if device == "cuda" else "cpu")[0]
        else:
            import torch
            self.torch = torch

    def up(self, a):
        if self.impl == "cupy":
            return self.cp.asarray(a)
        if self.impl == "jax":
            return self.jax.device_put(a, self.dev)
        return self.torch.from_numpy(a).to(self.device)

    def down(self, a):
        import numpy as np
        if isinstance(a, (int, float, np.ndarray, np.generic)):  # a host scalar (dt, a count)
            return np.asarray(a)
        if self.impl == "cupy":
            return self.cp.asnumpy(a)
        if self.impl == "jax":
            return np.asarray(a)
        return a.detach().cpu().numpy()

    def sync(self, out=None):
        if self.impl == "cupy":
            self.cp.cuda.Device().synchronize()
        elif self.impl == "jax":
            self.jax.block_until_ready(out)
        elif self.device == "cuda":
            self.torch.cuda.synchronize()

    def restore(self, dst, src):
        if self.impl == "cupy":
            dst[...] = src
        elif self.impl != "jax":  # JAX arrays are immutable: nothing to restore
            dst.copy_(src)


class _GpuFloat(float):
    """A Python float kernel argument with the type a GPU launch gives it (fp64: bool)."""


def interpret_floats_as_gpu():
    """Under TRITON_INTERPRET=1 a Python float kernel argument reaches the kernel as a Python
    float (a weak constant: `(x * y).to(...)` of two of them fails), where a GPU launch passes a
    typed scalar: fp64 for a parameter annotated "fp64", fp32 otherwise. Give the interpreter
    the GPU's types, as tests/difftest/conftest.py does (--device cpu, appyc cases only)."""
    import inspect
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter
    from triton.runtime.jit import _normalize_ty

    def typed(v, ann):
        if type(v) is not float or ann == "constexpr":
            return v
        out = _GpuFloat(v if ann == "fp64" else float(np.float32(v)))
        out.fp64 = ann == "fp64"
        return out

    cvt = interpreter._implicit_cvt

    def implicit_cvt(arg):
        if isinstance(arg, _GpuFloat):
            ty, dt = (tl.float64, np.float64) if arg.fp64 else (tl.float32, np.float32)
            return tl.tensor(interpreter.TensorHandle(np.array([float(arg)], dtype=dt), ty), ty)
        return cvt(arg)

    def annotations(fn):
        out = {}
        for n, prm in inspect.signature(fn).parameters.items():
            if prm.annotation is not inspect.Parameter.empty:
                try:
                    out[n] = _normalize_ty(prm.annotation)
                except Exception:
                    out[n] = str(prm.annotation)
        return out

    run = interpreter.InterpretedFunction.run

    def typed_run(self, *args, **kwargs):
        ann = annotations(self.fn)
        args = tuple(typed(v, ann.get(n)) for n, v in zip(inspect.signature(self.fn).parameters,
                                                          args))
        return run(self, *args, **{k: typed(v, ann.get(k)) for k, v in kwargs.items()})

    interpreter._implicit_cvt = implicit_cvt
    interpreter.InterpretedFunction.run = typed_run


def emit(tag, obj=None):
    print(f"@@{tag} {json.dumps(obj) if obj is not None else ''}", flush=True)


def run_case(a):
    """Measured part waits for GO on stdin, so the parent can overlap our start-up with the
    previous case while only one process at a time uses the device."""
    import numpy as np
    st, kernel = split_case(a.kernel)
    spec = KERNELS[kernel]
    impl = a.impl
    mod = None  # appyc's generated module (its tuning tables)
    try:
        be = Backend(impl, a.device)
        if impl.startswith("appyc"):
            if a.device == "cpu":
                interpret_floats_as_gpu()
            mod = load_appyc_module(a.modules, a.kernel, impl)
            fn = getattr(mod, kernel)
        elif impl == "cupy":  # peers: the same functions for both sets
            fn = cupy_impl(kernel)
        elif impl in ("torch_compile", "torch"):
            fn = torch_impl(kernel, compiled=impl == "torch_compile")
        else:
            jax, jfn = jax_impl(kernel)
    except ImportError as exc:
        emit("RESULT", {"status": "not installed", "detail": str(exc)[:200]})
        return
    args = make_inputs(kernel, a.size)
    names = [n for n, _ in args]
    arr_names = [n for n, v in args if isinstance(v, np.ndarray)]
    if impl == "jax":
        scalars = {n: v for n, v in args if n not in arr_names}
        # Scalars (step counts, alpha, beta) are compile-time constants of the jitted function.
        jitted = jax.jit(lambda *arrs: jfn(**scalars, **dict(zip(arr_names, arrs))))
        call = lambda: jitted(*[dev[n] for n in arr_names])  # noqa: E731
    else:
        call = lambda: fn(*[dev[n] for n in names])  # noqa: E731
    if a.device == "cuda" and impl not in ("cupy", "jax"):
        be.torch.zeros(1, device="cuda")  # CUDA context now, not in the measured part
    emit("READY")
    if sys.stdin.readline().strip() != "GO":
        return
    # Inputs go to the device only now, so a waiting process never competes with a measured one.
    dev = {n: (be.up(v) if n in arr_names else v) for n, v in args}
    # A copy: on the CPU torch's `up` shares the NumPy array's memory, as `dev` does, and the
    # restores before each timed call would copy the written arrays onto themselves.
    pristine = {n: be.up(dict(args)[n].copy()) for n in spec["writes"]} if impl != "jax" else {}
    dev_arrays = [dev[n] for n in arr_names]
    be.sync(dev_arrays if impl == "jax" else None)
    del args

    t0 = time.perf_counter()
    ret = call()
    be.sync(ret)
    first = time.perf_counter() - t0
    # Outputs of the first call: written arrays by name, then returned values as ret0, ret1...
    outs = {}
    if impl == "jax":
        ret = tuple(ret)
        for n, v in zip(spec["writes"], ret):
            outs[n] = be.down(v)
        rets = ret[len(spec["writes"]):]
    else:
        for n in spec["writes"]:
            outs[n] = be.down(dev[n])
        rets = () if ret is None else (tuple(ret) if isinstance(ret, (tuple, list)) else (ret,))
    for i, v in enumerate(rets):
        outs[f"ret{i}"] = be.down(v)
    out_path = Path(a.work) / f"out_{a.kernel}_{impl}.npz"
    np.savez(out_path, **outs)
    del ret, rets, outs
    res = {"status": "ok", "first_s": first, "out": str(out_path)}

    if not a.first_only:
        def once():
            for n, src in pristine.items():
                be.restore(dev[n], src)
            be.sync(dev_arrays if impl == "jax" else None)
            t = time.perf_counter()
            r = call()
            be.sync(r)
            return time.perf_counter() - t

        warm = once()  # a second call: recompiles on new argument values happen here
        # appyc spreads its tuning over calls (APPYC_TUNE_BUDGET a call): call on, untimed,
        # until every tuning table of the module has settled, so the steady state is the
        # tuned kernel's; how many calls that took is reported beside the first call.
        settle_s = time.perf_counter()
        settle_calls = settle_tuning(mod, once)
        res.update(settle_calls=settle_calls, settle_s=time.perf_counter() - settle_s)
        warm = once() if settle_calls else warm
        # Then --warmup seconds of calls, untimed: a device timed straight from idle runs its
        # first short kernels at lower clocks, which put whichever case ran first behind.
        until = time.perf_counter() + a.warmup
        while time.perf_counter() < until:
            once()
        # The count of timed calls comes from a call made now: the second call above can still
        # carry a tuning step or a recompile (then only three calls were timed: softmax and
        # gesummv on an H200, stop 43).
        warm = once()
        reps = max(3, min(a.max_reps, int(a.time_budget / max(warm, 1e-6))))
        times = sorted(once() for _ in range(reps))
        res.update(ms=1e3 * times[len(times) // 2], reps=reps, min_ms=1e3 * times[0])
    if mod is not None:
        res["tuning"] = tuning_choices(mod)
    emit("RESULT", res)


def settle_tuning(mod, once, limit=200):
    """Calls `once()`, untimed, until every tuning table of the appyc module `mod` has settled
    (at most `limit` calls; none for `mod` None); returns how many calls that took."""
    tables = [] if mod is None else [t for t in vars(mod).values() if type(t).__name__ == "_AppycTuning"]
    calls = 0
    # getattr: modules from before tuning was spread over calls have no `pending`
    while any(getattr(t, "pending", None) for t in tables) and calls < limit:
        once()
        calls += 1
    return calls


def tuning_choices(mod):
    """Each tuning table of an appyc module: its default and the configuration this process
    ended up with per key (the key as text), so a run shows whether the tuned build left its
    default: {kernel: {"default": [...], "chosen": {key: [...]}, "pending": [key, ...]}}."""
    out = {}
    for t in vars(mod).values():
        if type(t).__name__ != "_AppycTuning":
            continue
        out[t.kernel] = {"default": list(t.default),
                         "chosen": {repr(k): list(c) for k, c in t.chosen.items()}}
        if getattr(t, "pending", None):
            out[t.kernel]["pending"] = [repr(k) for k in t.pending]
    return out


def left_defaults(tuning):
    """The choices of `tuning_choices` that are not their kernel's default, as short text
    ("_syrk_kernel0_tiles=(32, 64, 16, 4, 3)"), or '' when every choice is the default."""
    return ", ".join(f"{kernel}={tuple(c)}" for kernel, t in sorted(tuning.items())
                     for c in t["chosen"].values() if c != t["default"])


def load_appyc_module(modules, case, impl, prefix="appyc"):
    """A fresh instance of an appyc build's module (appyc_mvl256: the `--mvl 256` file; the
    other appyc impls share the default file). prefix keeps instances of one file apart."""
    import importlib.util
    st, kernel = split_case(case)
    stem = kernel + ("_mvl256" if impl == "appyc_mvl256" else "")
    spec = importlib.util.spec_from_file_location(f"{prefix}_{st}_{stem}",
                                                  module_dir(modules, st) / f"{stem}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def module_dir(modules, st):
    """Where --generate puts a set's modules: ours at the top, the natural set in natural/."""
    return Path(modules) if st == "ours" else Path(modules) / st


def load_source(kernel, st="ours"):
    """The annotated source's function, to run on NumPy arrays (pragmas are comments)."""
    import importlib.util
    mod_spec = importlib.util.spec_from_file_location(f"ref_{st}_{kernel}",
                                                      SET_DIRS[st] / f"{kernel}.py")
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    return getattr(mod, kernel)


def reference_outputs(kernel, fn, args):
    """Run fn on (copies of) args: (written arrays and returned values by name, seconds)."""
    import numpy as np
    spec = KERNELS[kernel]
    args = [(n, v.copy() if isinstance(v, np.ndarray) else v) for n, v in args]
    t0 = time.perf_counter()
    ret = fn(*[v for _, v in args])
    elapsed = time.perf_counter() - t0
    outs = {n: v for n, v in args if n in spec["writes"]}
    rets = () if ret is None else (tuple(ret) if isinstance(ret, tuple) else (ret,))
    outs.update({f"ret{i}": np.asarray(v) for i, v in enumerate(rets)})
    return outs, elapsed


def check_source_against_math(kernel, args, st="ours"):
    """'' when the annotated source and MATH agree on these inputs, else what differs. A
    natural source is checked against the ours source of its kernel, or NATURAL_MATH."""
    import numpy as np
    got, _ = reference_outputs(kernel, load_source(kernel, st), args)
    if st == "ours":
        other = MATH[kernel]
    else:
        other = load_source(kernel) if kernel in SET_KERNELS["ours"] else NATURAL_MATH[kernel]
    want, _ = reference_outputs(kernel, other, args)
    bad = [n for n in want if got[n].shape != want[n].shape
           or not np.allclose(got[n], want[n], rtol=1e-10, atol=1e-12)]
    return "; ".join(f"{n}: max |diff| {np.max(np.abs(got[n] - want[n])):.2e}"
                     if got[n].shape == want[n].shape else f"{n}: shape" for n in bad)


def ref_case(case, size):
    """The reference a case is checked against: its own, except a natural kernel that has an
    ours source at `paper` size, which shares the ours reference (same inputs, same outputs;
    its loop source would run for minutes to hours in plain Python there)."""
    st, k = split_case(case)
    return k if st != "ours" and size != "small" and k in SET_KERNELS["ours"] else case


def run_reference(a):
    """The annotated source on NumPy arrays: the reference outputs, saved for the checker.
    Kernels in MATH: at `small` sizes the source, checked against the math (a mismatch is an
    error); at `paper` sizes the math itself (the scalar-loop source would take hours).
    Natural sources: at `small` sizes the source, checked against the ours source of the same
    kernel or NATURAL_MATH; at `paper` sizes NATURAL_MATH (the others share the ours
    reference: ref_case)."""
    import numpy as np
    st, kernel = split_case(a.kernel)
    args = make_inputs(kernel, a.size)
    math = MATH if st == "ours" else NATURAL_MATH
    by_math = kernel in math and a.size != "small"
    if (st != "ours" or kernel in MATH) and not by_math:
        why = check_source_against_math(kernel, args, st)
        if why:
            other = "math" if kernel in math else "ours source"
            emit("RESULT", {"status": "error", "detail": f"source != {other}: {why}"[:300]})
            return
    fn = math[kernel] if by_math else load_source(kernel, st)
    outs, elapsed = reference_outputs(kernel, fn, args)
    path = Path(a.work) / f"ref_{a.kernel}.npz"
    np.savez(path, **outs)
    emit("RESULT", {"status": "ok", "s": elapsed, "out": str(path), "by": "math" if by_math else
                    "source"})


def probe_limits(a):
    """The device's limits, measured in this fresh process: copy bandwidth (a 1 GiB float64
    dst.copy_(src), bytes read + written over the median time) and torch.matmul throughput
    at 8192^2 in float64 and float32 (TF32 off: plain fp32). On the CPU: 64 MiB and 1024^2."""
    import torch
    cuda = a.device == "cuda"
    dev = "cuda" if cuda else "cpu"
    torch.backends.cuda.matmul.allow_tf32 = False

    def median_s(fn, reps):
        fn()  # warm-up (cuBLAS handles, kernels)
        if cuda:
            torch.cuda.synchronize()
        ts = []
        for _ in range(reps):
            t = time.perf_counter()
            fn()
            if cuda:
                torch.cuda.synchronize()
            ts.append(time.perf_counter() - t)
        return sorted(ts)[len(ts) // 2]

    n = (1 << 27) if cuda else (1 << 23)  # float64 elements: 1 GiB / 64 MiB
    src = torch.rand(n, dtype=torch.float64, device=dev)
    dst = torch.empty_like(src)
    res = {"copy_bytes": 2 * n * 8}
    res["copy_GBps"] = res["copy_bytes"] / median_s(lambda: dst.copy_(src), 21) / 1e9
    del src, dst
    m = 8192 if cuda else 1024
    res["matmul_n"] = m
    for name, dt in (("fp64", torch.float64), ("fp32", torch.float32)):
        x = torch.rand(m, m, dtype=dt, device=dev)
        y = torch.rand(m, m, dtype=dt, device=dev)
        res[f"{name}_TFLOPs"] = 2 * m ** 3 / median_s(lambda: torch.matmul(x, y), 7) / 1e12
        del x, y
    if cuda:
        torch.cuda.empty_cache()
    emit("RESULT", dict(res, status="ok"))


def measure_limits(a, env, start):
    """probe_limits in its own process, before the cases (the device is otherwise idle)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--probe-limits", "--device", a.device]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO,
                           timeout=a.case_timeout)
    except subprocess.TimeoutExpired:
        return {"status": f"timeout ({a.case_timeout:.0f} s)"}
    res = parse_result(p.stdout)
    if res is None:
        return {"status": "error", "detail": " / ".join(p.stderr.strip().splitlines()[-3:])[-300:]}
    print(f"[{time.perf_counter() - start:5.0f} s] limits: copy {res['copy_GBps']:.0f} GB/s, "
          f"matmul fp64 {res['fp64_TFLOPs']:.2f} TFLOP/s, fp32 {res['fp32_TFLOPs']:.2f} TFLOP/s",
          flush=True)
    return res


# ================================================================== parent: scheduling
def parse_result(text):
    res = None
    for line in text.splitlines():
        if line.startswith("@@RESULT "):
            res = json.loads(line[len("@@RESULT "):])
    return res


def tail(path, n=400):
    """The end of a log: the exception message last, so it survives truncation."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return ""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return " / ".join(lines[-3:])[-n:]


class Case:
    """One (kernel, implementation) process: started early, measured when given GO."""

    def __init__(self, kernel, impl, a, env, cmd=None):
        """cmd: another script's child that speaks the same READY/GO/RESULT lines (the
        tuner check's three builds in one process); by default this script's --case."""
        self.kernel, self.impl = kernel, impl
        self.log = Path(a.work) / f"log_{kernel}_{impl}.txt"
        if cmd is None:
            cmd = [sys.executable, str(Path(__file__).resolve()), "--case", kernel, "--impl",
                   impl, "--size", a.size, "--device", a.device, "--work", a.work,
                   "--time-budget", str(a.time_budget), "--max-reps", str(a.max_reps),
                   "--warmup", str(a.warmup)]
            if a.modules:
                cmd += ["--modules", str(Path(a.modules).resolve())]
            if impl == "appyc_warm":
                cmd += ["--first-only"]
        self.lines = queue.Queue()
        self.logf = open(self.log, "w")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.logf, text=True, env=env, cwd=REPO,
                                     start_new_session=True)  # its own group: killable as one
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.started = time.perf_counter()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, tags, deadline):
        """The first protocol line with one of tags, or None at EOF/deadline."""
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                return None
            try:
                line = self.lines.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            if line is None:
                return None
            for tag in tags:
                if line.startswith(f"@@{tag}"):
                    return tag, line[len(tag) + 2:].strip()
            self.logf.write(line)  # anything else a library printed

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        self.logf.close()

    def run(self, timeout):
        """Wait until ready (start-up capped too), send GO, wait for the result."""
        got = self.wait_for(["READY", "RESULT"], time.perf_counter() + timeout)
        if got is None:
            self.kill()
            return {"status": "timeout (start-up)" if self.proc.returncode in (-9, None) else
                    "error", "detail": tail(self.log)}
        if got[0] == "RESULT":  # e.g. not installed
            self.kill()
            return json.loads(got[1])
        try:
            self.proc.stdin.write("GO\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        t0 = time.perf_counter()
        got = self.wait_for(["RESULT"], t0 + timeout)
        if got is None:
            timed_out = time.perf_counter() - t0 >= timeout
            self.kill()
            if timed_out:
                return {"status": f"timeout ({timeout:.0f} s)", "detail": tail(self.log)}
            return {"status": "error", "detail": tail(self.log)}
        self.kill()
        return json.loads(got[1])


def compare(ref_path, out_path, writes_and_rets):
    """NPBench's rule per array: allclose(rtol 1e-5, atol 1e-8) or relative L2 error < 1e-5."""
    import numpy as np
    ref, out = np.load(ref_path), np.load(out_path)
    worst, bad = 0.0, []
    for name in writes_and_rets:
        if name not in out.files:
            bad.append(f"{name} missing")
            continue
        e, g = ref[name], out[name]
        if e.shape != g.shape:
            bad.append(f"{name} shape {g.shape} != {e.shape}")
            continue
        e64, g64 = e.astype(np.float64), g.astype(np.float64)
        close = bool(np.allclose(g64, e64, rtol=RTOL, atol=ATOL))
        norm = float(np.linalg.norm(e64))
        rel = float(np.linalg.norm(g64 - e64)) / (norm if norm > 0 else 1.0)
        if not np.isfinite(rel):
            rel = float("inf")
        worst = max(worst, rel)
        if not (close or rel < L2TOL):
            bad.append(f"{name} rel L2 {rel:.1e}")
    return (not bad), worst, "; ".join(bad)


def selected_cases(a):
    """The cases of the sets run, in table order, narrowed by --only."""
    return [c for c in all_cases(a.sets)
            if not a.only or c in a.only or split_case(c)[1] in a.only]


def run_all(a):
    import numpy as np  # noqa: F401  (fail early if the runner lacks NumPy)
    start = time.perf_counter()
    kernels = selected_cases(a)
    impls = [i for i in IMPLS if not a.impls or i in a.impls]
    if any(i.startswith("appyc") for i in impls) and not a.modules:
        sys.exit("--modules DIR is needed for the appyc rows (see --generate)")
    work = Path(a.work or tempfile.mkdtemp(prefix="npbench_"))
    work.mkdir(parents=True, exist_ok=True)
    a.work = str(work)
    base_env = dict(os.environ, PYTHONUNBUFFERED="1", XLA_PYTHON_CLIENT_PREALLOCATE="false")
    if a.device == "cpu":
        base_env["TRITON_INTERPRET"] = "1"
        base_env.setdefault("JAX_PLATFORMS", "cpu")
        base_env.setdefault("CUDA_VISIBLE_DEVICES", "")
    print(f"npbench: {len(kernels)} kernels (sets: {', '.join(a.sets)}) x {len(impls)} "
          f"implementations, size {a.size}, "
          f"device {a.device}, work dir {work}", flush=True)

    # NumPy references: background processes, longest first.
    def reference(k):
        env = dict(base_env, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        cmd = [sys.executable, str(Path(__file__).resolve()), "--ref", k, "--size", a.size,
               "--work", str(work)]
        t0 = time.perf_counter()
        if stopping.is_set():
            return {"status": "not run (out of time)"}
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env, cwd=REPO, start_new_session=True)
        ref_procs.append(p)
        try:
            out, err = p.communicate(timeout=a.ref_timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return {"status": f"timeout ({a.ref_timeout:.0f} s)"}
        res = parse_result(out)
        if res is None:
            if stopping.is_set():
                return {"status": "not finished in time"}
            return {"status": "error", "detail": " / ".join(err.strip().splitlines()[-3:])[-300:]}
        if res.get("status") != "ok":
            print(f"  reference {k}: {res.get('status')} {res.get('detail', '')}", flush=True)
            return res
        print(f"  reference {k}: NumPy {res['s']:.2f} s (done at "
              f"{time.perf_counter() - start:.0f} s)", flush=True)
        res["wall"] = time.perf_counter() - t0
        return res

    stopping, ref_procs = threading.Event(), []
    ref_pool = ThreadPoolExecutor(max_workers=a.ref_jobs)
    # A natural kernel with an ours source shares its ours reference at `paper` (ref_case).
    ref_names = sorted({ref_case(k, a.size) for k in kernels}, key=ref_order)
    ref_futs = {r: ref_pool.submit(reference, r) for r in ref_names}
    refs = {k: ref_futs[ref_case(k, a.size)] for k in kernels}

    # Checks: as soon as both the case output and the reference exist, off the main thread.
    check_pool = ThreadPoolExecutor(max_workers=1)

    def check(k, impl, res):
        ref = refs[k].result()
        if ref.get("status") != "ok":
            return {"correct": None, "check": f"no reference: {ref.get('status')}"}
        spec = KERNELS[split_case(k)[1]]
        names = spec["writes"] + [f"ret{i}" for i in range(spec["nret"])]
        try:
            ok, err, why = compare(ref["out"], res["out"], names)
        except Exception as exc:  # a corrupt output file is a failed check, not a crash
            ok, err, why = False, float("nan"), f"{type(exc).__name__}: {exc}"[:200]
        finally:
            if not a.keep:
                Path(res["out"]).unlink(missing_ok=True)
        return {"correct": ok, "err": err, "check": why}

    # Per-kernel cache directories: appyc and appyc_warm share them (cold, then warm).
    def env_for(k, impl):
        env = dict(base_env)
        group = "appyc" if impl == "appyc_warm" else impl
        cache = work / "cache" / f"{k}_{group}"
        if impl != "appyc_warm":
            shutil.rmtree(cache, ignore_errors=True)
        if impl == "appyc_default":
            env["APPYC_AUTOTUNE"] = "0"
        cache.mkdir(parents=True, exist_ok=True)
        env["TRITON_CACHE_DIR"] = str(cache / "triton")
        env["APPYC_CACHE_DIR"] = str(cache / "appyc")
        env["TORCHINDUCTOR_CACHE_DIR"] = str(cache / "inductor")
        env["CUPY_CACHE_DIR"] = str(cache / "cupy")
        env["JAX_COMPILATION_CACHE_DIR"] = str(cache / "jax")
        return env

    cases_start = start
    if a.refs_first:
        # So that nothing but the timed cases runs on the host (the references stream large
        # arrays for up to minutes). For gemver this did not narrow the spread between runs
        # (docs/performance.md §65). The deadline counts from here.
        for fut in ref_futs.values():
            fut.result()
        cases_start = time.perf_counter()
        print(f"[{cases_start - start:5.0f} s] references done; timing starts", flush=True)
    limits = measure_limits(a, base_env, start) if a.limits else {"status": "not measured"}
    plan = [(k, i) for k in sorted(kernels, key=run_order) for i in impls]
    rows = {}
    pending = []
    nxt = None
    for n, (k, impl) in enumerate(plan):
        el = time.perf_counter() - start
        skip = None
        if time.perf_counter() - cases_start > a.deadline:
            skip = f"skipped (run past --deadline {a.deadline:.0f} s)"
        elif impl == "appyc_warm" and "appyc" in impls and rows[(k, "appyc")].get("status") != "ok":
            skip = "skipped (no cold run to warm the caches)"
        if skip:
            if nxt is not None and (nxt.kernel, nxt.impl) == (k, impl):
                nxt.kill()
            nxt = None
            rows[(k, impl)] = {"status": skip}
            print(f"[{el:5.0f} s] {case_label(k):22s} {LABEL[impl]:20s} {skip}", flush=True)
            continue
        # The warm appyc run must not start before the cold one has filled the caches.
        case = nxt if nxt is not None else Case(k, impl, a, env_for(k, impl))
        nxt = None
        res = None
        if n + 1 < len(plan) and plan[n + 1][1] != "appyc_warm":
            nk, ni = plan[n + 1]
            try:
                nxt = Case(nk, ni, a, env_for(nk, ni))
            except OSError:
                nxt = None
        try:
            # Near the deadline a case gets less, so the whole run ends in time.
            cap = min(a.case_timeout, max(10.0, cases_start + a.deadline + a.case_timeout
                                          - time.perf_counter()))
            res = case.run(cap)
        except Exception as exc:
            res = {"status": "error", "detail": f"{type(exc).__name__}: {exc}"[:300]}
            case.kill()
        if res.get("status") == "ok":
            pending.append((k, impl, res, check_pool.submit(check, k, impl, res)))
        rows[(k, impl)] = res
        el = time.perf_counter() - start
        ms = f"{res['ms']:.4g} ms" if "ms" in res else "-"
        first = f"first {res['first_s']:.2f} s" if "first_s" in res else ""
        detail = f"  {res.get('detail', '')[:300]}" if res.get("status") != "ok" else ""
        print(f"[{el:5.0f} s] {case_label(k):22s} {LABEL[impl]:20s} {res.get('status'):12s} "
              f"{ms:>12s} "
              f"{first}{detail}", flush=True)

    # Wait for the references and checks, but not past the hard end: a reference still running
    # then leaves its rows unchecked ("?"), which the table says.
    hard_end = cases_start + a.deadline + 2 * a.case_timeout
    for k, impl, res, fut in pending:
        try:
            left = hard_end - time.perf_counter()
            res.update(fut.result(timeout=max(5.0, left) if left < 1e6 else None))
        except Exception:
            res.update(correct=None, check="reference not ready in time")
        if res.get("correct") is False:
            print(f"  WRONG {case_label(k)} {LABEL[impl]}: {res['check']}", flush=True)
    stopping.set()
    for p in ref_procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    ref_results = {k: dict(f.result() if f.done() else {"status": "not finished in time"},
                           of=ref_case(k, a.size)) for k, f in refs.items()}
    ref_pool.shutdown(wait=False, cancel_futures=True)
    check_pool.shutdown(wait=False, cancel_futures=True)
    meta = run_meta(a, time.perf_counter() - start)
    meta["limits"] = limits
    meta["refs_first"] = a.refs_first
    report(a, meta, kernels, impls, rows, ref_results)
    if a.json or a.out:
        path = Path(a.json) if a.json else Path(a.out).with_suffix(".json")
        path.write_text(json.dumps({
            "meta": meta, "kernels": kernels, "impls": impls,
            "rows": [dict(r, kernel=k, impl=i) for (k, i), r in rows.items()],
            "refs": ref_results}, indent=1) + "\n")
        print(f"wrote {path}", flush=True)
    if not a.keep:
        shutil.rmtree(work / "cache", ignore_errors=True)
    bad = [r for r in rows.values() if r.get("correct") is False]
    appyc_bad = [key for key, r in rows.items() if key[1].startswith("appyc")
                 and (r.get("status") != "ok" or r.get("correct") is not True)]
    return 1 if bad or appyc_bad else 0


# ================================================================== parent: report
def run_meta(a, total):
    """What the table header says about the run (kept in the JSON for --merge)."""
    import platform
    if a.device == "cuda":
        try:
            import torch
            dev = torch.cuda.get_device_name()
        except Exception:
            dev = "cuda"
    else:
        dev = "CPU (appyc under TRITON_INTERPRET=1): a smoke test, not a benchmark"
    vers = []
    for mod in ("numpy", "torch", "triton", "cupy", "jax"):
        try:
            vers.append(f"{mod} {__import__(mod).__version__}")
        except Exception:
            vers.append(f"{mod} not installed")
    return {"device": dev, "versions": ", ".join(vers) + f", python {platform.python_version()}",
            "size": a.size, "total_s": total, "runs": 1}


def report(a, meta, kernels, impls, rows, refs):
    table = markdown(meta, kernels, impls, rows, refs)
    print("\n" + table, flush=True)
    if a.out:
        Path(a.out).write_text(table)
        print(f"wrote {a.out}", flush=True)
    if a.png:
        try:
            chart(meta["size"], kernels, rows, a.png)
            print(f"wrote {a.png}", flush=True)
        except Exception as exc:
            print(f"no chart: {type(exc).__name__}: {exc}", flush=True)


def merge(a):
    """One table and chart from the JSON files of several runs (e.g. kernels split in two)."""
    metas, kernels, impls, rows, refs = [], set(), set(), {}, {}
    for path in a.merge:
        d = json.loads(Path(path).read_text())
        metas.append(d["meta"])
        kernels |= set(d["kernels"])
        impls |= set(d["impls"])
        for r in d["rows"]:
            rows[(r["kernel"], r["impl"])] = r
        refs.update(d["refs"])
    meta = dict(metas[0], total_s=sum(m["total_s"] for m in metas), runs=len(metas))
    report(a, meta, [k for k in all_cases() if k in kernels], [i for i in IMPLS if i in impls],
           rows, refs)
    return 0


def _cells(r):
    """(ms, first s, correct) cells of one implementation's result."""
    st = r.get("status", "not run")
    if st != "ok":
        short = st if st.startswith(("not ", "timeout", "skipped")) else "ERROR"
        return short, "-", "-"
    ms = f"{r['ms']:.4g}" if "ms" in r else "-"
    first = f"{r['first_s']:.2f}"
    if r.get("settle_calls"):
        # Tuning spread over calls: how many more calls (and seconds) until it settled.
        first += f" (+{r['settle_calls']} calls, {r['settle_s']:.1f} s)"
    c = r.get("correct")
    ok = "yes" if c else ("no" if c is False else "?")
    if c is False and r.get("check"):
        ok = "no: " + r["check"].replace("|", "/")[:60]
    return ms, first, ok


SET_TITLE = {"ours": "Set `ours`: scripts/npbench/, sources shaped for appyc",
             "natural": "Set `natural`: scripts/npbench_natural/, sources written as APPy users "
                        "write them"}
BEST_OF = ["cupy", "jax", "torch_compile", "torch"]  # the peers "best peer" picks from


def best_peer(k, impls, rows):
    """(ms, impl) of the fastest peer whose first call was not wrong, or None."""
    timed = [(rows[(k, p)]["ms"], p) for p in BEST_OF if p in impls
             and rows.get((k, p), {}).get("ms") and rows[(k, p)].get("correct") is not False]
    return min(timed) if timed else None


def geomean(vals):
    import math
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def markdown(meta, kernels, impls, rows, refs):
    lines = ["# NPBench kernels: appyc against CuPy, JAX, torch.compile and torch\n"]
    info = [f"device: {meta['device']}", meta["versions"],
            f"size preset `{meta['size']}` (NPBench bench_info/*.json); time loops are timed "
            "whole; NumPy s: the reference run on the CPU, several at once "
            + ("before any case was timed" if meta.get("refs_first") else "beside the device cases")]
    info.append("two sets of sources, a section each: `ours` (scripts/npbench/, shaped for "
                "appyc) and `natural` (scripts/npbench_natural/, loops with `parallel for` / "
                "`simd`, bare host lines and scalars in time loops, `A, B = B, A` swaps, as "
                "APPy users write them; with three kernels of its own: wave_decay, relax_tol, "
                "smooth_swap). Peers run the same functions for both sets")
    info.append("ms: steady state, median of repeated calls (wall time between device "
                "synchronisations; written arrays restored before each call, untimed)")
    info.append("first s: wall time of the first call in a fresh process (compilation, tuning, "
                "one run; inputs already on the device). appyc: cold = empty APPYC_CACHE_DIR and "
                "TRITON_CACHE_DIR; warm = a second process with the same directories. Peers "
                "start with empty inductor/Triton/CuPy caches. appyc tunes within a time budget a "
                "call: `(+k calls, s)` is how many more calls (and how long) its tuning took to "
                "settle, untimed, before the steady state was measured")
    info.append("correct: every written array and returned value of the first call against "
                "the NumPy run of the annotated source (allclose rtol 1e-5, atol 1e-8, or "
                "relative L2 < 1e-5); `(math)`: the scalar-loop sources of "
                + ", ".join(list(MATH) + list(NATURAL_MATH)) + " would run for minutes to "
                "hours in plain Python, so at this size the reference is an independent "
                "whole-array NumPy expression of the math, which the `small` runs (and "
                "tests/difftest/test_npbench_math.py for the ours set) check against the "
                "source; `(ours)`: a natural source whose kernel has an ours source shares "
                "that reference at this size (the `small` runs check the two sources agree)")
    runs = f" in {meta['runs']} runs" if meta.get("runs", 1) > 1 else ""
    info.append(f"total wall time {meta['total_s']:.0f} s{runs}")
    lines += [f"- {x}" for x in info]
    for st in SETS:
        cases = [k for k in kernels if split_case(k)[0] == st]
        if cases:
            lines += ["", f"## {SET_TITLE[st]}", ""]
            lines += results_table(meta, cases, impls, rows, refs)
            lines += ratio_table(st, cases, impls, rows)
    lines += limits_table(meta, kernels, impls, rows)
    failed = [(k, i, r) for (k, i), r in rows.items()
              if r.get("status") not in ("ok", "not installed") and "detail" in r]
    if failed:
        lines += ["", "Failures:", ""]
        for k, i, r in failed:
            lines.append(f"- {case_label(k)} / {LABEL[i]}: {r.get('status')}: "
                         f"{r.get('detail', '')[:400].replace('|', '/')}")
    return "\n".join(lines) + "\n"


def results_table(meta, cases, impls, rows, refs):
    head = ["kernel", "size", "NumPy s"]
    for i in impls:
        head += [f"{LABEL[i]} ms", "first s", "ok"] if i != "appyc_warm" else \
            ["appyc first s (warm)", "ok"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k in cases:
        ref = refs.get(k, {})
        np_s = f"{ref['s']:.2f}" if ref.get("status") == "ok" else ref.get("status", "-")
        if ref.get("by") == "math":
            np_s += " (math)"
        if ref.get("of", k) != k:
            np_s += " (ours)"
        cells = [case_label(k), size_text(split_case(k)[1], meta["size"]), np_s]
        for i in impls:
            ms, first, ok = _cells(rows.get((k, i), {}))
            cells += [first, ok] if i == "appyc_warm" else [ms, first, ok]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def ratio_table(st, cases, impls, rows):
    """Steady-state peer ms / appyc ms per peer, against the best peer, and (natural set)
    against appyc on the ours source; a geometric mean per column."""
    peers = [p for p in PEERS if p in impls]
    if "appyc" not in impls or not peers:
        return []
    cols = [(f"vs {LABEL[p]}", p) for p in peers] + [("vs best peer", "best")]
    if st != "ours":
        cols.append(("vs appyc on the ours source", "ours"))
    lines = ["", "Steady-state speed-up of appyc: peer ms / appyc ms (above 1: appyc "
             "faster). `appyc --mvl 256` is appyc's own fixed-MVL build (the default should "
             "never be slower); best peer: the fastest of " + ", ".join(LABEL[p] for p in BEST_OF)
             + " whose result was not wrong"
             + ("; ours source: appyc's time on scripts/npbench/'s source of the kernel over its "
                "time on this one (below 1: this natural source runs slower)"
                if st != "ours" else "") + ". geomean: over the kernels with a value.", ""]
    head = ["kernel"] + [c for c, _ in cols]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    per_col = {key: [] for _, key in cols}
    for k in cases:
        base = rows.get((k, "appyc"), {}).get("ms")
        cells = [case_label(k)]
        for _, key in cols:
            note = ""
            if key == "best":
                best = best_peer(k, impls, rows)
                v, note = (best[0], f" ({LABEL[best[1]]})") if best else (None, "")
            elif key == "ours":
                v = rows.get((split_case(k)[1], "appyc"), {}).get("ms")
            else:
                v = rows.get((k, key), {}).get("ms")
            if base and v:
                per_col[key].append(v / base)
                cells.append(f"{v / base:.3g}x{note}")
            else:
                cells.append("-")
        lines.append("| " + " | ".join(cells) + " |")
    cells = ["geomean"]
    for _, key in cols:
        g = geomean(per_col[key])
        cells.append(f"{g:.3g}x ({len(per_col[key])})" if g else "-")
    lines.append("| " + " | ".join(cells) + " |")
    return lines


def fmt_count(x, unit):
    for div, pre in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:.3g} {pre}{unit}"
    return f"{x:.3g} {unit}"


def limits_table(meta, kernels, impls, rows):
    """Per kernel: its flops and minimum bytes (cost), which measured limit bounds it, and the
    fraction of that limit appyc and the fastest peer reach in the steady state."""
    lim = meta.get("limits") or {}
    if lim.get("status") != "ok":
        return ["", f"Limits: {lim.get('status', 'not measured')}; no roofline table."]
    bw = lim["copy_GBps"] * 1e9
    lines = ["", f"Against the device's measured limits (this run, fresh process before the "
             f"cases): copy bandwidth {lim['copy_GBps']:.0f} GB/s (a "
             f"{lim['copy_bytes'] / 2 / 2**30:.3g} GiB float64 `dst.copy_(src)`, read + written "
             f"bytes over the median time); torch.matmul at {lim['matmul_n']}^2: fp64 "
             f"{lim['fp64_TFLOPs']:.2f} TFLOP/s, fp32 {lim['fp32_TFLOPs']:.2f} TFLOP/s (TF32 "
             "off). flops and bytes come from the math (`cost` in bench_npbench.py: bytes = "
             "every array read once and written once, per time step for the time loops). The "
             "bound is the larger of bytes / bandwidth and flops / matmul throughput (fp64; "
             "softmax fp32; floyd_warshall int32: bandwidth); each % is the achieved GB/s or "
             "TFLOP/s of that bound over its limit, steady state. Above 100 %: the bytes model "
             "was beaten (arrays kept in cache across steps).", ""]
    head = ["kernel", "flops", "min bytes", "bound", "limit", "appyc", "appyc %",
            "best peer", "peer", "peer %"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for k in kernels:
        kernel = split_case(k)[1]
        flops, nbytes = cost(kernel, KERNELS[kernel][meta["size"]])
        peak_name = PEAK.get(kernel, "fp64")
        peak = lim[f"{peak_name}_TFLOPs"] * 1e12 if peak_name else None
        by_flops = peak is not None and flops / peak > nbytes / bw
        if by_flops:
            bound, limit = f"compute ({peak_name})", f"{peak / 1e12:.3g} TFLOP/s"
        else:
            bound, limit = "memory", f"{bw / 1e9:.0f} GB/s"

        def achieved(ms):
            if not ms:
                return "-", "-"
            rate = (flops if by_flops else nbytes) / (ms / 1e3)
            text = f"{rate / 1e12:.3g} TFLOP/s" if by_flops else f"{rate / 1e9:.4g} GB/s"
            return text, f"{100 * rate / (peak if by_flops else bw):.3g} %"
        a_rate, a_pct = achieved(rows.get((k, "appyc"), {}).get("ms"))
        best = best_peer(k, impls, rows)
        p_rate, p_pct = achieved(best[0] if best else None)
        lines.append("| " + " | ".join([
            case_label(k), fmt_count(flops, "FLOP"), fmt_count(nbytes, "B"), bound, limit,
            a_rate, a_pct, LABEL[best[1]] if best else "-", p_rate, p_pct]) + " |")
    return lines


def chart(size, kernels, rows, path):
    """One panel per set: per kernel, a bar per peer from parity (1) to peer ms / appyc ms."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    panels = [(st, [k for k in kernels if split_case(k)[0] == st]) for st in SETS]
    panels = [(st, cases) for st, cases in panels if cases]
    peers = [p for p in PEERS if any(rows.get((k, p), {}).get("ms") for k in kernels)]
    width = 0.8 / max(1, len(peers))
    widest = max(len(cases) for _, cases in panels)
    fig, axes = plt.subplots(len(panels), 1, squeeze=False,
                             figsize=(max(8, 1.1 * widest), 4.8 * len(panels)))
    for ax, (st, cases) in zip(axes[:, 0], panels):
        x = np.arange(len(cases))
        for n, p in enumerate(peers):
            vals = []
            for k in cases:
                base, v = rows.get((k, "appyc"), {}).get("ms"), rows.get((k, p), {}).get("ms")
                vals.append(v / base if base and v else np.nan)
            vals = np.array(vals)
            # Bars grow from 1 (parity): up where appyc is faster, down where it is slower.
            ax.bar(x + (n - (len(peers) - 1) / 2) * width, vals - 1.0, width, bottom=1.0,
                   label=LABEL[p], color=f"C{n}")
        ax.set_yscale("log")
        ax.axhline(1.0, color="black", linewidth=0.8)
        for n, k in enumerate(cases):  # say why a group is empty rather than leave a gap
            r = rows.get((k, "appyc"), {})
            if "ms" not in r:
                ax.text(n, 0.5, f"appyc: {r.get('status', 'not run')}"[:40], rotation=90,
                        ha="center", va="center", fontsize=7,
                        transform=ax.get_xaxis_transform())
        ax.set_xlim(-0.6, widest - 0.4)
        ax.set_xticks(x, [split_case(k)[1] for k in cases], rotation=30, ha="right")
        ax.set_ylabel("peer time / appyc time")
        where = SET_DIRS[st].relative_to(REPO)
        ax.set_title(f"{st} sources ({where}/): speed-up of appyc, {size} sizes, steady state")
        ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


# ================================================================== --generate (here: has appyc)
def generate(out_dir, appyc, sets=SETS):
    """Each set's sources, twice (default, --mvl 256): ours into DIR, the natural set into
    DIR/natural/ (module_dir)."""
    failed = 0
    for st, k in (split_case(c) for c in all_cases(sets)):
        src = SET_DIRS[st] / f"{k}.py"
        mod_dir = module_dir(out_dir, st)
        mod_dir.mkdir(parents=True, exist_ok=True)
        for stem, extra in ((k, []), (f"{k}_mvl256", ["--mvl", "256"])):
            out = mod_dir / f"{stem}.py"
            proc = subprocess.run([str(appyc), str(src), "-o", str(out)] + extra,
                                  capture_output=True, text=True, timeout=120)
            ok = proc.returncode == 0 and out.exists()
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {src.relative_to(REPO)} {' '.join(extra)} -> {out}",
                  flush=True)
            if not ok:
                print(proc.stderr.strip()[-2000:], flush=True)
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--generate", metavar="DIR", help="compile every source into DIR (needs appyc)")
    p.add_argument("--appyc", default=os.environ.get("APPYC_BIN", REPO / "target/release/appyc"))
    p.add_argument("--modules", metavar="DIR", help="the modules compiled into DIR")
    p.add_argument("--out", metavar="RESULTS.md", help="write the markdown table here")
    p.add_argument("--png", metavar="CHART.png", help="write the speed-up chart here")
    p.add_argument("--json", metavar="RESULTS.json",
                   help="write all results here (default: --out with .json)")
    p.add_argument("--merge", type=lambda s: s.split(","), metavar="A.json,B.json",
                   help="no run: one table and chart from the JSON files of several runs")
    p.add_argument("--set", dest="sets", choices=SETS + ["both"], default="both",
                   help="which sources: ours (scripts/npbench/), natural "
                        "(scripts/npbench_natural/) or both (default); for --generate too")
    p.add_argument("--only", type=lambda s: s.split(","),
                   help="comma-separated kernels: a name picks it in every set run "
                        "(fdtd_2d), a case name one set's (fdtd_2d.natural)")
    p.add_argument("--impls", type=lambda s: s.split(","),
                   help="comma-separated subset of " + ",".join(IMPLS))
    p.add_argument("--size", choices=("paper", "small"), default=None,
                   help="NPBench preset (default: paper on cuda, small on cpu)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--case-timeout", type=float, default=60.0, metavar="S",
                   help="cap on each process's start-up and on its measured part")
    p.add_argument("--ref-timeout", type=float, default=600.0, metavar="S",
                   help="cap on each NumPy reference run")
    p.add_argument("--ref-jobs", type=int, default=None,
                   help="NumPy reference processes at once (default: CPUs/4, at least 1)")
    p.add_argument("--refs-first", action="store_true",
                   help="finish the NumPy references before timing any case (by default they "
                        "run beside the cases, which saves wall time but loads the host CPU)")
    p.add_argument("--warmup", type=float, default=0.2, metavar="S",
                   help="untimed calls for about S seconds before the steady-state timing")
    p.add_argument("--time-budget", type=float, default=0.5, metavar="S",
                   help="steady-state timing: about S seconds of repetitions per case "
                        "(at least 3, at most --max-reps)")
    p.add_argument("--max-reps", type=int, default=20)
    p.add_argument("--deadline", type=float, default=None, metavar="S",
                   help="start no new case after S seconds, the rest are rows marked skipped "
                        "(default: 420 on cuda, so that a run ends within 10 min; none on cpu)")
    p.add_argument("--work", metavar="DIR", help="scratch directory (default: a new temp dir)")
    p.add_argument("--keep", action="store_true", help="keep outputs and caches in --work")
    # internal: one case / one reference in a child process
    p.add_argument("--case", help=argparse.SUPPRESS)
    p.add_argument("--impl", help=argparse.SUPPRESS)
    p.add_argument("--ref", help=argparse.SUPPRESS)
    p.add_argument("--no-limits", dest="limits", action="store_false",
                   help="do not measure the device's copy bandwidth and matmul throughput")
    p.add_argument("--first-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--probe-limits", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.size is None:
        a.size = "paper" if a.device == "cuda" else "small"
    if a.deadline is None:
        a.deadline = 420.0 if a.device == "cuda" else float("inf")
    if a.ref_jobs is None:
        a.ref_jobs = max(1, (os.cpu_count() or 2) // 4)
    a.sets = SETS if a.sets == "both" else [a.sets]
    if a.generate:
        sys.exit(generate(Path(a.generate), Path(a.appyc), a.sets))
    if a.probe_limits:
        probe_limits(a)
        return
    if a.merge:
        sys.exit(merge(a))
    if a.case:
        a.kernel = a.case
        try:
            run_case(a)
        except Exception:
            traceback.print_exc()
            sys.exit(1)
        return
    if a.ref:
        a.kernel = a.ref
        run_reference(a)
        return
    if a.only:
        known = set(KERNELS) | set(all_cases())
        unknown = [k for k in a.only if k not in known]
        if unknown:
            p.error(f"unknown kernels {unknown}; known: {', '.join(KERNELS)} (natural set: "
                    f"{', '.join(case_name('natural', k) for k in SET_KERNELS['natural'])})")
        if not selected_cases(a):
            p.error(f"--only {','.join(a.only)} picks no kernel of --set {'/'.join(a.sets)}")
    if not a.modules and not a.generate:
        p.error("give --generate DIR or --modules DIR")
    sys.exit(run_all(a))


if __name__ == "__main__":
    main()
