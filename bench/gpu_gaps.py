#!/usr/bin/env python3
"""Where the remaining NPBench gaps come from (issues 6 and 9), measured in one device call.

Each part compares appyc's generated kernels (from `bench_npbench.py --generate gen_npbench`)
with hand-written variants that each change one thing, so the next compiler change is picked by
a measurement rather than a guess. Every variant's result is checked against torch.

  1. gemm (NPBench `paper`, fp64): the generated tile kernel per tile configuration, against a
     variant without the epilogue's read of C, without the `if` around the tile, and with
     grouped program order (GROUP rows of tiles share B's columns in the L2); torch.matmul.
  2. per-kernel breakdown (torch.profiler) of the generated gemver, covariance and gemm at
     `paper` sizes, and gemver's column reduction A^T y as one program per column block (as
     generated) against the rows split over several programs (partial sums, then a finish).
  3. jacobi_1d (N = 32000, 4000 steps): the generated persistent kernel against a hand-written
     one whose phases wait only for the neighbouring blocks (per-block flags) instead of a grid
     barrier.
  4. fold: gemm with its epilogue folded into the accumulator (beta * C loaded before the k
     loop, alpha scaling one operand, as the source orders the arithmetic), in grouped order.
  5. more_breakdowns: per-kernel time of the generated symm, syr2k, trmm and covariance.
  6. tile_configs: whole generated linear-algebra functions with their tile kernels forced to
     each candidate configuration (the tuner's own choice first), wall and device time.

    python3 bench/gpu_gaps.py --modules gen_npbench --out $OUT
"""
import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parent))  # gpu_tile_probe
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))  # bench_npbench
from bench_npbench import make_inputs  # noqa: E402
from gpu_tile_probe import timed as probe_timed  # noqa: E402

LOG = []


MODULES = "gen_npbench"


def log(*parts):
    line = " ".join(str(p) for p in parts)
    print(line, flush=True)
    LOG.append(line)


def timed(fn, reps=30):
    """Median wall time of `fn` between device synchronisations (gpu_tile_probe's timer)."""
    return probe_timed(fn, reps)


def load(modules, stem):
    spec = importlib.util.spec_from_file_location(f"gen_{stem}", Path(modules) / f"{stem}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def device_args(kernel):
    out = {}
    for name, v in make_inputs(kernel, "paper"):
        out[name] = torch.from_numpy(v).cuda() if hasattr(v, "shape") else v
    return out


# ---------------------------------------------------------------- 1. gemm variants
@triton.jit
def gemm_variant(C, A, B, M, N, K, alpha: "fp64", beta: "fp64", sam, sak, sbk, sbn, scm, scn,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, STAGES: tl.constexpr,
                 READ_C: tl.constexpr, GUARD: tl.constexpr, GROUP: tl.constexpr,
                 FOLD: tl.constexpr = 0):
    if GROUP > 0:
        # Tiles numbered down GROUP rows of tiles before moving one column right.
        pid = tl.program_id(0)
        tiles_m = tl.cdiv(M, BM)
        tiles_n = tl.cdiv(N, BN)
        per_group = GROUP * tiles_n
        first_m = (pid // per_group) * GROUP
        rows_here = tl.minimum(tiles_m - first_m, GROUP)
        pid_m = first_m + (pid % per_group) % rows_here
        pid_n = (pid % per_group) // rows_here
    else:
        pid_m = tl.program_id(1)
        pid_n = tl.program_id(0)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    run = True
    if GUARD:
        run = (pid_n * BN < N) & (pid_n * BN + BN > 0)
    if FOLD > 0:
        # The source's own order: C *= beta first, then C += (alpha * A[i, k]) * B[k, j]; the
        # accumulator starts as beta * C (no second C tile after the loop) and alpha scales
        # one operand (FOLD 1: A's tile, 2: B's tile).
        ok = (rm[:, None] < M) & (rn[None, :] < N)
        acc = tl.load(C + rm[:, None] * scm + rn[None, :] * scn, mask=ok, other=0.0) * beta
        for k0 in tl.range(0, K, BK, num_stages=STAGES):
            rk = k0 + tl.arange(0, BK)
            a = tl.load(A + rm[:, None] * sam + rk[None, :] * sak,
                        mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
            b = tl.load(B + rk[:, None] * sbk + rn[None, :] * sbn,
                        mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
            if FOLD == 1:
                acc = tl.dot(a * alpha, b, acc, input_precision="ieee",
                             out_dtype=C.dtype.element_ty)
            else:
                acc = tl.dot(a, b * alpha, acc, input_precision="ieee",
                             out_dtype=C.dtype.element_ty)
        ok = (rm[:, None] < M) & (rn[None, :] < N)
        tl.store(C + rm[:, None] * scm + rn[None, :] * scn, acc, mask=ok)
    elif run:
        acc = tl.zeros((BM, BN), dtype=C.dtype.element_ty)
        for k0 in tl.range(0, K, BK, num_stages=STAGES):
            rk = k0 + tl.arange(0, BK)
            a = tl.load(A + rm[:, None] * sam + rk[None, :] * sak,
                        mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
            b = tl.load(B + rk[:, None] * sbk + rn[None, :] * sbn,
                        mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc, input_precision="ieee", out_dtype=C.dtype.element_ty)
        ok = (rm[:, None] < M) & (rn[None, :] < N)
        ptr = C + rm[:, None] * scm + rn[None, :] * scn
        if READ_C:
            tl.store(ptr, tl.load(ptr, mask=ok) * beta + alpha * acc, mask=ok)
        else:
            tl.store(ptr, alpha * acc, mask=ok)


GEMM_CONFIGS = [(64, 64, 16, 4, 3), (64, 64, 16, 4, 4), (64, 64, 32, 4, 3), (32, 64, 16, 4, 3),
                (128, 64, 16, 8, 3), (64, 128, 16, 8, 3), (128, 128, 16, 8, 3),
                (128, 64, 32, 8, 3), (64, 64, 16, 8, 3), (64, 64, 16, 2, 3)]


class GemmCase:
    """gemm's `paper` inputs, its torch reference, and a reporter that checks and times."""

    def __init__(self):
        d = device_args("gemm")
        self.C0, self.A, self.B, self.alpha, self.beta = d["C"], d["A"], d["B"], d["alpha"], d["beta"]
        self.M, self.K = self.A.shape
        self.N = self.B.shape[1]
        self.flops = 2.0 * self.M * self.N * self.K
        self.ref = self.beta * self.C0 + self.alpha * (self.A @ self.B)
        self.C = self.C0.clone()

    def report(self, name, fn, check=True):
        """One row: the result of `fn` against the reference (when it computes gemm), its time."""
        C, ref = self.C, self.ref
        try:
            C.copy_(self.C0)
            fn()
            torch.cuda.synchronize()
            err = ((C - ref).norm() / ref.norm()).item() if check else float("nan")
            t = timed(fn)
            log(f"gemm {name:46s} ms={t * 1e3:8.4f} TFLOP/s={self.flops / t / 1e12:6.2f} "
                f"err={err:.1e}")
        except Exception as e:  # a configuration the compiler rejects is a row, not a stop
            log(f"gemm {name:46s} error {str(e)[:160]}")


FOLD_CONFIGS = [(64, 64, 16, 4, 3), (64, 64, 16, 4, 4), (64, 64, 32, 4, 3), (64, 64, 16, 8, 3),
                (128, 64, 16, 8, 3), (128, 128, 16, 8, 3), (64, 128, 16, 4, 3),
                (128, 64, 16, 4, 3)]


def part_fold(mods):
    """gemm with the epilogue folded into the accumulator (see gemm_variant's FOLD)."""
    gen = mods["gemm"]
    g = GemmCase()
    C0, C, A, B, alpha, beta, M, N, K = g.C0, g.C, g.A, g.B, g.alpha, g.beta, g.M, g.N, g.K
    report = g.report

    report("torch.addmm", lambda: torch.addmm(C0, A, B, beta=beta, alpha=alpha, out=C))
    report("generated function (tuned)", lambda: gen.gemm(alpha, beta, C, A, B))
    for cfg in FOLD_CONFIGS:
        bm, bn, bk, w, s = cfg
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        for fold in (0, 1, 2):
            report(f"fold={fold} group=8 {cfg}",
                   lambda grid=grid, bm=bm, bn=bn, bk=bk, w=w, s=s, fold=fold: gemm_variant[grid](
                       C, A, B, M, N, K, alpha, beta, A.stride(0), A.stride(1), B.stride(0),
                       B.stride(1), C.stride(0), C.stride(1), BM=bm, BN=bn, BK=bk, STAGES=s,
                       READ_C=1, GUARD=0, GROUP=8, FOLD=fold, num_warps=w))


def part_more_breakdowns(mods):
    """Per-kernel device time of whole generated NPBench functions (inputs as the benchmark's)."""
    for kernel in ["symm", "syr2k", "trmm", "covariance"]:
        d = device_args(kernel)
        fn = getattr(mods[kernel], kernel)
        args = list(d.values())
        breakdown(kernel, lambda fn=fn, args=args: fn(*args))


def part_tile_configs(mods):
    """Whole generated functions with their tile kernels forced to each candidate (the tuned
    choice first): wall time per call, as the benchmark measures it, and device time."""
    from torch.profiler import ProfilerActivity, profile
    for kernel in ["syrk", "trmm", "symm", "syr2k", "gemm"]:
        mod = mods[kernel]
        d = device_args(kernel)
        saved = {k: v.clone() for k, v in d.items() if hasattr(v, "clone")}
        fn = getattr(mod, kernel)

        def call(fn=fn, d=d, saved=saved):
            for k, v in saved.items():
                d[k].copy_(v)
            fn(*d.values())
        call()
        tables = [v for v in vars(mod).values()
                  if type(v).__name__ == "_AppycTuning" and not v.lanes_first]
        chosen = {id(t): dict(t.chosen) for t in tables}
        log(f"{kernel}: tuned {[list(t.chosen.values()) for t in tables]}")
        for config in [None] + list(mod._APPYC_TILE_CANDIDATES):
            for t in tables:
                t.chosen.update({k: (config or v) for k, v in chosen[id(t)].items()})
            wall = timed(call)
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(5):
                    call()
                torch.cuda.synchronize()
            dev = sum((getattr(e, "device_time_total", 0) or 0) for e in prof.key_averages()
                      if "tiles" in e.key) / 5
            log(f"    {str(config or 'tuned'):24s} wall {wall * 1e3:8.4f} ms  tile kernel "
                f"{dev:8.1f} us")


def part_gemm(mods):
    gen = mods["gemm"]
    g = GemmCase()
    C0, C, A, B, alpha, beta, M, N, K = g.C0, g.C, g.A, g.B, g.alpha, g.beta, g.M, g.N, g.K
    report = g.report

    report("torch.matmul (C = A @ B)", lambda: torch.matmul(A, B, out=C), False)
    report("torch.addmm", lambda: torch.addmm(C0, A, B, beta=beta, alpha=alpha, out=C), True)
    report("generated function (tuned)", lambda: gen.gemm(alpha, beta, C, A, B), True)
    for cfg in GEMM_CONFIGS:
        report(f"generated tiles {cfg}", lambda cfg=cfg: gen._launch_gemm_kernel0_tiles(
            C, A, B, M, N, beta, K, alpha, M, N, cfg), True)
        bm, bn, bk, w, s = cfg
        for read_c, guard, group in [(1, 1, 0), (0, 0, 0), (1, 0, 0), (1, 0, 8), (1, 1, 8)]:
            if group:
                grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
            else:
                grid = (triton.cdiv(N, bn), triton.cdiv(M, bm))
            report(f"variant {cfg} readC={read_c} guard={guard} group={group}",
                   lambda grid=grid, bm=bm, bn=bn, bk=bk, w=w, s=s, rc=read_c, g=guard,
                   gr=group: gemm_variant[grid](
                       C, A, B, M, N, K, alpha, beta, A.stride(0), A.stride(1), B.stride(0),
                       B.stride(1), C.stride(0), C.stride(1), BM=bm, BN=bn, BK=bk, STAGES=s,
                       READ_C=rc, GUARD=g, GROUP=gr, num_warps=w), bool(read_c))


# ---------------------------------------------------------------- 2. breakdowns, gemver A^T y
def breakdown(name, fn):
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    reps = 10
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        us = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
        if us:
            rows.append((e.key, us / reps, e.count // reps))
    rows.sort(key=lambda r: -r[1])
    total = timed(fn)
    log(f"breakdown {name}: wall {total * 1e3:.4f} ms per call")
    for key, us, count in rows[:8]:
        log(f"    {us:9.1f} us  x{count:<3d} {key[:90]}")


@triton.jit
def column_partials(y, A, partial, N, rows_per_split, sa0,
                    R: tl.constexpr, MVL: tl.constexpr):
    j = tl.program_id(0) * MVL + tl.arange(0, MVL)
    split = tl.program_id(1)
    lo = split * rows_per_split
    hi = tl.minimum(lo + rows_per_split, N)
    acc = tl.zeros((R, MVL), dtype=A.dtype.element_ty)
    for i0 in range(lo, hi, R):
        i = i0 + tl.arange(0, R)
        ok = (i < hi)[:, None] & (j < N)[None, :]
        acc += tl.load(y + i, mask=i < hi, other=0.0)[:, None] * tl.load(
            A + i[:, None] * sa0 + j[None, :], mask=ok, other=0.0)
    tl.store(partial + split * N + j, tl.sum(acc, axis=0), mask=j < N)


@triton.jit
def column_finish(partial, x, z, N, beta: "fp64", SPLITS: tl.constexpr, MVL: tl.constexpr):
    j = tl.program_id(0) * MVL + tl.arange(0, MVL)
    ok = j < N
    s = tl.zeros((MVL,), dtype=x.dtype.element_ty)
    for k in range(SPLITS):
        s += tl.load(partial + k * N + j, mask=ok, other=0.0)
    tl.store(x + j, tl.load(x + j, mask=ok) + beta * s + tl.load(z + j, mask=ok), mask=ok)


@triton.jit
def fused_partials(A, u1, v1, u2, v2, y, partial, N, rows_per_split, sa0,
                   R: tl.constexpr, MVL: tl.constexpr, EVICT: tl.constexpr):
    # gemver's rank-2 update and A^T y by hand: each split updates its rows of a column block
    # and sums y[i] * A_new[i, j] into one partial per split.
    j = tl.program_id(0) * MVL + tl.arange(0, MVL)
    split = tl.program_id(1)
    lo = split * rows_per_split
    hi = tl.minimum(lo + rows_per_split, N)
    jm = j < N
    a1 = tl.load(v1 + j, mask=jm, other=0.0)
    a2 = tl.load(v2 + j, mask=jm, other=0.0)
    acc = tl.zeros((R, MVL), dtype=A.dtype.element_ty)
    for i0 in range(lo, hi, R):
        i = i0 + tl.arange(0, R)
        im = i < hi
        ok = im[:, None] & jm[None, :]
        ptr = A + i[:, None] * sa0 + j[None, :]
        a = tl.load(ptr, mask=ok, other=0.0) + tl.load(u1 + i, mask=im, other=0.0)[:, None] * a1[None, :] \
            + tl.load(u2 + i, mask=im, other=0.0)[:, None] * a2[None, :]
        if EVICT:
            tl.store(ptr, a, mask=ok, eviction_policy="evict_first")
        else:
            tl.store(ptr, a, mask=ok)
        acc += tl.load(y + i, mask=im, other=0.0)[:, None] * a
    tl.store(partial + split * N + j, tl.sum(acc, axis=0), mask=jm)


def part_gemver_fused(mods):
    """The fused rank-2 update + A^T y (passes/fuse_into_reduction.rs): generated kernel per
    configuration and split density, hand variants (rows per strip, eviction hint), and the
    rest of gemver, against a copy of the same bytes."""
    d = device_args("gemver")
    gv = mods["gemver"]
    args = [d[k] for k in ["alpha", "beta", "A", "u1", "v1", "u2", "v2", "w", "x", "y", "z"]]
    breakdown("gemver", lambda: gv.gemver(*args))
    A, u1, v1, u2, v2, w, x, y, z = (d[k] for k in ["A", "u1", "v1", "u2", "v2", "w", "x", "y", "z"])
    alpha, beta = d["alpha"], d["beta"]
    N = A.shape[0]
    A0, x0 = A.clone(), x.clone()
    A_ref = A0 + torch.outer(u1, v1) + torch.outer(u2, v2)
    x_ref = x0 + beta * (A_ref.T @ y) + z
    gb = 2 * A.numel() * 8 / 1e9

    def check(label, run):
        A.copy_(A0)
        x.copy_(x0)
        run()
        err = max(((A - A_ref).norm() / A_ref.norm()).item(), ((x - x_ref).norm() / x_ref.norm()).item())
        # Timed on the updated A (the update's values do not change its cost).
        t = timed(run)
        log(f"gemver fused {label}: {t * 1e6:8.1f} us {gb / t:7.0f} GB/s err={err:.1e}")

    per_sm0 = gv._APPYC_SPLIT_PROGRAMS_PER_SM
    for per_sm in (4, 8, 16, 32):
        gv._APPYC_SPLIT_PROGRAMS_PER_SM = per_sm
        gv._APPYC_SPLIT_STATE.clear()
        for cfg in [(32, 4), (64, 4), (128, 4), (64, 8), (128, 8)]:
            check(f"generated {cfg} {per_sm}/SM",
                  lambda cfg=cfg: gv._launch_gemver_kernel1(A, u1, v1, u2, v2, y, x, z, N, beta, cfg))
    gv._APPYC_SPLIT_PROGRAMS_PER_SM = per_sm0
    gv._APPYC_SPLIT_STATE.clear()
    for mvl, r, warps, splits, evict in [(64, 32, 4, 16, 0), (64, 16, 4, 16, 0), (64, 64, 8, 16, 0),
                                         (128, 16, 4, 8, 0), (128, 32, 8, 8, 0), (64, 32, 4, 32, 0),
                                         (64, 32, 4, 16, 1), (128, 16, 4, 16, 1)]:
        partial = torch.empty(splits, N, device="cuda", dtype=A.dtype)
        rows = triton.cdiv(N, splits)

        def hand(mvl=mvl, r=r, warps=warps, splits=splits, partial=partial, rows=rows, evict=evict):
            fused_partials[(triton.cdiv(N, mvl), splits)](
                A, u1, v1, u2, v2, y, partial, N, rows, A.stride(0), R=r, MVL=mvl, EVICT=evict,
                num_warps=warps)
            column_finish[(triton.cdiv(N, 256),)](partial, x, z, N, beta, SPLITS=splits, MVL=256)
        check(f"hand mvl={mvl} rows={r} warps={warps} splits={splits} evict={evict}", hand)
    t = timed(lambda: gv._launch_gemver_kernel2(A, x, w, N, alpha))
    log(f"gemver A x (kernel2): {t * 1e6:8.1f} us {A.numel() * 8 / 1e9 / t:7.0f} GB/s")
    src = torch.empty(1 << 27, device="cuda", dtype=torch.float64)
    dst = torch.empty_like(src)
    t = timed(lambda: dst.copy_(src))
    log(f"copy 1 GiB fp64: {2 * src.numel() * 8 / t / 1e9:.0f} GB/s")
    del src, dst


def part_launch_paths(mods):
    """CPU cost per launch of gemver's `A x` kernel at a tiny size (the GPU idles): the generated
    launcher, a bare `kernel[grid](...)`, the compiled kernel's own runner, and its C launcher
    called directly with the stream cached; and what a Python specialization key of the same
    arguments costs."""
    gv = mods["gemver"]
    n = 64
    A = torch.rand(n, n, device="cuda", dtype=torch.float64)
    x = torch.rand(n, device="cuda", dtype=torch.float64)
    w = torch.zeros(n, device="cuda", dtype=torch.float64)
    mvl, warps = 256, 4
    args = (A, x, w, n, 1.5, A.stride(0), A.stride(1), x.stride(0), w.stride(0))
    kernel = gv._gemver_kernel2
    compiled = kernel[(n,)](*args, MVL=mvl, num_warps=warps)
    runner = compiled[(n, 1, 1)]
    stream = torch.cuda.current_stream().cuda_stream
    run, function, meta = compiled.run, compiled.function, compiled.packed_metadata
    full = args + (mvl,)

    def key():
        return tuple((a.dtype, a.data_ptr() % 16 == 0) if isinstance(a, torch.Tensor) else
                     (a == 1, a % 16 == 0, -2**31 <= a < 2**31) if isinstance(a, int) else None
                     for a in args)

    gv._gemver_kernel2_tuning.chosen[(gv._appyc_size(n), A.dtype, x.dtype, w.dtype)] = (mvl, warps)
    paths = {
        "generated launcher": lambda: gv._launch_gemver_kernel2(A, x, w, n, 1.5),
        "generated launcher, config given": lambda: gv._launch_gemver_kernel2(A, x, w, n, 1.5, (mvl, warps)),
        "bare kernel[grid]": lambda: kernel[(n,)](*args, MVL=mvl, num_warps=warps),
        "compiled[grid] runner": lambda: runner(*full),
        "compiled.run direct": lambda: run(n, 1, 1, stream, function, meta, None, None, None, *full),
        "python key only": key,
    }

    def per_call(fn, calls=20000):
        fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / calls * 1e6

    best = {name: [] for name in paths}
    for _ in range(3):
        for name, fn in paths.items():
            best[name].append(per_call(fn))
    for name in paths:
        log(f"launch path {name}: {min(best[name]):6.2f} us per call")


def part_go_fast(mods):
    """go_fast's tuned choice against each candidate, kernel by kernel and whole."""
    gf = load(MODULES, "go_fast")
    a = device_args("go_fast")["a"]
    n = a.shape[0]
    out = gf.go_fast(a)
    torch.cuda.synchronize()
    log(f"go_fast tuned choices: {gf._go_fast_kernel0_tuning.chosen} {gf._go_fast_kernel1_tuning.chosen}")
    breakdown("go_fast", lambda: gf.go_fast(a))
    trace = torch.zeros(1, dtype=torch.float64, device="cuda")
    gb = 2 * a.numel() * 8 / 1e9
    for cfg in [(128, 4), (256, 4), (512, 4), (1024, 4), (512, 8), (1024, 8)]:
        t = timed(lambda cfg=cfg: gf._launch_go_fast_kernel1(out, a, trace, n, cfg))
        log(f"go_fast kernel1 {cfg}: {t * 1e6:8.1f} us {gb / t:7.0f} GB/s")
    t = timed(lambda: gf.go_fast(a))
    log(f"go_fast whole (tuned): {t * 1e6:8.1f} us")


@triton.jit
def _probe_grid_barrier(counter, target):
    tl.debug_barrier()
    tl.atomic_add(counter, 1, sem="release")
    while tl.atomic_add(counter, 0, sem="acquire") < target:
        pass
    tl.debug_barrier()


@triton.jit
def jacobi_1d_blocked(A, B, scratch, sync, N, T, CHUNK, G: tl.constexpr, W: tl.constexpr):
    # Temporal blocking by hand: each program owns CHUNK interior elements and, per group of G
    # steps (2G phases), loads its chunk with a halo of 2G on each side into its own scratch,
    # runs the 2G phases there with block barriers only (each phase valid one element further
    # in), and writes its chunk of both arrays back. Two grid barriers a group: after the loads
    # (no one overwrites what a neighbour still loads) and after the writes.
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    H: tl.constexpr = 2 * G
    lo = 1 + pid * CHUNK
    hi = tl.minimum(lo + CHUNK, N - 1)
    x = tl.arange(0, W)
    gi = lo - H + x
    inside = (gi >= 0) & (gi < N)
    interior = (gi >= 1) & (gi < N - 1)
    owned = (gi >= lo) & (gi < hi)
    sa = scratch + pid * 2 * W
    sb = sa + W
    arrived = tl.full((), 0, tl.int64)
    for g0 in range(0, T, G):
        steps = tl.minimum(G, T - g0)
        tl.store(sa + x, tl.load(A + gi, mask=inside, other=0.0))
        tl.store(sb + x, tl.load(B + gi, mask=inside, other=0.0))
        arrived += nprog
        _probe_grid_barrier(sync, arrived)
        for p in range(0, 2 * steps):
            flip = (p % 2) * W  # even phases read A's copy and write B's, odd the reverse
            src = sa + flip
            dst = sb - flip
            ok = interior & (x >= 1) & (x < W - 1)
            v = 0.33333 * (tl.load(src + x - 1, mask=ok, other=0.0) + tl.load(src + x, mask=ok, other=0.0)
                           + tl.load(src + x + 1, mask=ok, other=0.0))
            # One block barrier a phase: its loads are done before anyone writes what it read,
            # and its stores are visible to the next phase's loads.
            tl.store(dst + x, v, mask=ok)
            tl.debug_barrier()
        tl.store(A + gi, tl.load(sa + x), mask=owned)
        tl.store(B + gi, tl.load(sb + x), mask=owned)
        arrived += nprog
        _probe_grid_barrier(sync, arrived)


def part_temporal(mods):
    """A hand-written temporally blocked jacobi_1d (NPBench paper size) against NumPy and the
    generated persistent kernel: what fewer grid barriers would buy (issue 6's 4x JAX)."""
    import numpy as np
    d = device_args("jacobi_1d")
    T, A0, B0 = d["TSTEPS"], d["A"].clone(), d["B"].clone()
    N = A0.shape[0]
    a, b = A0.cpu().numpy().copy(), B0.cpu().numpy().copy()
    for _ in range(T):
        b[1:-1] = 0.33333 * (a[:-2] + a[1:-1] + a[2:])
        a[1:-1] = 0.33333 * (b[:-2] + b[1:-1] + b[2:])
    A, B = A0.clone(), B0.clone()
    jm = mods["jacobi_1d"]
    t = timed(lambda: (A.copy_(A0), B.copy_(B0), jm.jacobi_1d(T, A, B)), reps=10)
    log(f"jacobi_1d generated persistent: {t * 1e3:7.3f} ms")
    for programs, group, warps in [(100, 4, 4), (100, 8, 4), (100, 16, 4), (100, 32, 4),
                                   (64, 16, 4), (128, 8, 4), (200, 8, 4), (100, 16, 8)]:
        chunk = -(-(N - 2) // programs)
        w = triton.next_power_of_2(chunk + 4 * group)
        scratch = torch.empty(programs * 2 * w, device="cuda", dtype=torch.float64)
        sync = torch.zeros(1, device="cuda", dtype=torch.int64)

        def run(programs=programs, group=group, warps=warps, chunk=chunk, w=w, scratch=scratch,
                sync=sync):
            A.copy_(A0)
            B.copy_(B0)
            sync.zero_()
            jacobi_1d_blocked[(programs,)](A, B, scratch, sync, N, T, chunk, G=group, W=w,
                                          num_warps=warps, launch_cooperative_grid=True)
        try:
            run()
            torch.cuda.synchronize()
            err = max(np.abs(A.cpu().numpy() - a).max(), np.abs(B.cpu().numpy() - b).max())
            t = timed(run, reps=10)
            log(f"jacobi_1d blocked programs={programs} steps/group={group} W={w} warps={warps}: "
                f"{t * 1e3:7.3f} ms ({t / (2 * T) * 1e6:.3f} us a phase) max err {err:.1e}")
        except Exception as e:
            log(f"jacobi_1d blocked programs={programs} steps/group={group}: {type(e).__name__}: {str(e)[:200]}")


def part_breakdowns(mods):
    d = device_args("gemver")
    gv = mods["gemver"]
    args = [d[k] for k in ["alpha", "beta", "A", "u1", "v1", "u2", "v2", "w", "x", "y", "z"]]
    breakdown("gemver", lambda: gv.gemver(*args))
    A, x, y, z, beta = d["A"], d["x"], d["y"], d["z"], d["beta"]
    N = A.shape[0]
    x0 = x.clone()
    ref = x0 + beta * (A.T @ y) + z
    gb = A.numel() * 8 / 1e9
    for cfg in [(32, 4), (64, 4), (128, 4), (64, 8), (128, 8)]:
        def gen_run(cfg=cfg):
            x.copy_(x0)
            gv._launch_gemver_kernel1(y, A, x, z, N, beta, cfg)
        gen_run()
        err = ((x - ref).norm() / ref.norm()).item()
        t = timed(gen_run)
        log(f"gemver A^T y generated {cfg}: {t * 1e6:8.1f} us {gb / t:7.0f} GB/s err={err:.1e}")
    for mvl, r, warps, splits in [(64, 32, 4, 4), (64, 32, 4, 8), (128, 32, 8, 4),
                                  (128, 16, 4, 8), (256, 16, 8, 4), (64, 64, 8, 8),
                                  (128, 32, 4, 16), (256, 8, 4, 8)]:
        partial = torch.empty(splits, N, device="cuda", dtype=A.dtype)
        rows = triton.cdiv(N, splits)

        def split_run(mvl=mvl, r=r, warps=warps, splits=splits, partial=partial, rows=rows):
            x.copy_(x0)
            column_partials[(triton.cdiv(N, mvl), splits)](
                y, A, partial, N, rows, A.stride(0), R=r, MVL=mvl, num_warps=warps)
            column_finish[(triton.cdiv(N, 256),)](partial, x, z, N, beta, SPLITS=splits,
                                                   MVL=256)
        split_run()
        err = ((x - ref).norm() / ref.norm()).item()
        t = timed(split_run)
        log(f"gemver A^T y split mvl={mvl} rows={r} warps={warps} splits={splits}: "
            f"{t * 1e6:8.1f} us {gb / t:7.0f} GB/s err={err:.1e}")
    src = torch.empty(1 << 27, device="cuda", dtype=torch.float64)
    dst = torch.empty_like(src)
    t = timed(lambda: dst.copy_(src))
    log(f"copy 1 GiB fp64: {2 * src.numel() * 8 / t / 1e9:.0f} GB/s")
    del src, dst

    d = device_args("covariance")
    cv = mods["covariance"]
    data0 = d["data"].clone()

    def cov_run():
        d["data"].copy_(data0)
        return cv.covariance(d["M"], d["float_n"], d["data"])
    breakdown("covariance", cov_run)
    g = mods["gemm"]
    d = device_args("gemm")
    breakdown("gemm", lambda: g.gemm(d["alpha"], d["beta"], d["C"], d["A"], d["B"]))


# ---------------------------------------------------------------- 3. jacobi_1d sync
@triton.jit
def jacobi_1d_flags(A, B, N, flags, phases, MVL: tl.constexpr):
    # Block v of phase p needs blocks v-1 and v+1 to have finished phase p-1: they wrote what it
    # reads (p-1) and read what it overwrites (p-2, implied). flags[v] = phases v finished.
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    nblk = tl.cdiv(N - 2, MVL)
    for p in range(phases):
        for v in range(pid, nblk, nprog):
            if v > 0:
                while tl.atomic_add(flags + v - 1, 0, sem="acquire") < p:
                    pass
            if v < nblk - 1:
                while tl.atomic_add(flags + v + 1, 0, sem="acquire") < p:
                    pass
            tl.debug_barrier()
            i = 1 + v * MVL + tl.arange(0, MVL)
            ok = i < N - 1
            if p % 2 == 0:
                tl.store(B + i, 0.33333 * (tl.load(A + i - 1, mask=ok) + tl.load(A + i, mask=ok)
                                           + tl.load(A + i + 1, mask=ok)), mask=ok)
            else:
                tl.store(A + i, 0.33333 * (tl.load(B + i - 1, mask=ok) + tl.load(B + i, mask=ok)
                                           + tl.load(B + i + 1, mask=ok)), mask=ok)
            tl.debug_barrier()
            tl.atomic_xchg(flags + v, p + 1, sem="release")


def part_jacobi_1d(mods):
    d = device_args("jacobi_1d")
    j1 = mods["jacobi_1d"]
    T = d["TSTEPS"]
    A0, B0 = d["A"].clone(), d["B"].clone()
    A, B = d["A"], d["B"]
    N = A.shape[0]

    def reference():
        a, b = A0.clone(), B0.clone()
        for _ in range(T):
            b[1:-1] = 0.33333 * (a[:-2] + a[1:-1] + a[2:])
            a[1:-1] = 0.33333 * (b[:-2] + b[1:-1] + b[2:])
        return a, b
    ra, rb = reference()

    def check():
        return max(((A - ra).abs().max()).item(), ((B - rb).abs().max()).item())

    def gen_run():
        A.copy_(A0)
        B.copy_(B0)
        j1.jacobi_1d(T, A, B)
    gen_run()
    err = check()
    t = timed(gen_run, reps=10)
    log(f"jacobi_1d generated: {t * 1e3:.3f} ms ({t / (2 * T) * 1e6:.3f} us/phase) err={err:.1e}")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for mvl, warps, programs in [(256, 4, None), (512, 4, None), (1024, 4, None),
                                 (256, 2, None), (128, 4, None)]:
        nblk = triton.cdiv(N - 2, mvl)
        grid = min(nblk, programs or sms)
        flags = torch.zeros(nblk, device="cuda", dtype=torch.int32)

        def flag_run(mvl=mvl, warps=warps, grid=grid, flags=flags):
            A.copy_(A0)
            B.copy_(B0)
            flags.zero_()
            jacobi_1d_flags[(grid,)](A, B, N, flags, 2 * T, MVL=mvl, num_warps=warps,
                                     launch_cooperative_grid=True)
        try:
            flag_run()
            err = check()
            t = timed(flag_run, reps=10)
            log(f"jacobi_1d neighbour flags mvl={mvl} warps={warps} programs={grid}: "
                f"{t * 1e3:.3f} ms ({t / (2 * T) * 1e6:.3f} us/phase) err={err:.1e}")
        except Exception as e:
            log(f"jacobi_1d neighbour flags mvl={mvl}: error {str(e)[:160]}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--modules", default="gen_npbench")
    p.add_argument("--out", default=".")
    p.add_argument("--parts", default="gemm,breakdowns,jacobi_1d")
    a = p.parse_args()
    global MODULES
    MODULES = a.modules
    log(torch.cuda.get_device_name(), triton.__version__, torch.__version__)
    mods = {s: load(a.modules, s) for s in ["gemm", "gemver", "covariance", "jacobi_1d", "symm",
                                            "syr2k", "trmm", "syrk"]}
    parts = {"gemm": part_gemm, "breakdowns": part_breakdowns, "jacobi_1d": part_jacobi_1d,
             "fold": part_fold, "more_breakdowns": part_more_breakdowns,
             "tile_configs": part_tile_configs, "gemver_fused": part_gemver_fused,
             "launch_paths": part_launch_paths, "go_fast": part_go_fast,
             "temporal": part_temporal}
    for name in a.parts.split(","):
        t0 = time.perf_counter()
        try:
            parts[name](mods)
        except Exception as e:  # one part's failure must not hide the others' numbers
            log(f"part {name} failed: {type(e).__name__}: {str(e)[:300]}")
        log(f"part {name}: {time.perf_counter() - t0:.1f} s")
        Path(a.out, "gaps.log").write_text("\n".join(LOG) + "\n")


if __name__ == "__main__":
    main()
