#!/usr/bin/env python3
"""Correctness check and benchmark of appyc-compiled samples on a GPU, against eager torch.

Two steps, because the GPU machine has no Rust toolchain:

  1. here (CPU), compile every sample into a directory:
       python3 bench/gpu_bench.py --generate gen_modules
  2. on the GPU machine (repo checkout with that directory in it):
       python3 bench/gpu_bench.py --modules gen_modules --out RESULTS.md

Per sample function (the first difftest case of each, from tests/difftest/cases.py):
  * NumPy check: the sample itself (NumPy reference, on the CPU) vs the compiled function on
    the device, same inputs, at a moderate size (the references are Python loops);
  * torch check: at the GPU size, compiled function vs its eager-torch twin (_torch_table);
  * timing at the GPU size: do_bench (median) of both, after an untimed first (autotuning) call;
  * torch.compile (default mode) of the eager-torch twin, for the tensor-model samples and
    vector_add, softmax_loops, spmv_csr (--compile-all: every sample; --no-compile: none):
    compiled on an untimed first call whose wall time is printed (compile s), its result checked
    against eager torch, then timed like the others (compiled ms, vs compiled = compiled/appyc).
    A compile error marks only that row's compiled columns (ERROR). Once the first calls have
    taken --compile-budget seconds in all (default 300), later cases are not compiled (SKIP), so
    that a full run stays under 9 minutes on one H100; each row prints the elapsed time.
Tolerances: rtol 1e-4 (fp32) / 1e-9 (fp64), with atol = rtol * max(1, max|ref|), so that sums
are judged against their magnitude; integers and booleans exact.

`--device cpu --small` runs the same flow on the CPU under TRITON_INTERPRET=1 with the difftest
sizes and time.perf_counter instead of do_bench: a check of this script, not a benchmark.
"""
import argparse
import os
import subprocess
import sys
import time
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
DIFFTEST = REPO / "tests" / "difftest"

# GPU problem sizes: defaults by the shape of a case's difftest size, then per-function overrides.
DEFAULT_GPU_SIZE = {1: 2**24, 2: (4096, 4096), 3: (256, 256, 256)}
GPU_SIZES = {
    "spmv_csr.spmv": 838_861,            # rows; ~20 nonzeros a row: ~2**24 nonzeros
    "spmv_csr.spmv_acc": 838_861,
    "group_by_sum.group_by_sum": (65536, 256),
    "sequential_prefix.prefix_sum": 2**16,         # one GPU thread walks the whole array
    "sequential_prefix.linear_recurrence": 2**16,
    "index_exprs.last_columns": 2**22,   # A is (M, 7)
    "syrk.syrk": (2048, 256),            # (N, M): C is N x N, A is N x M
    "softmax_tensor.softmax_short_rows": (16384, 1024),  # le(1024): rows of at most 1024
}
# Samples of the tensor-oriented model; these (and COMPILE_EXTRA) are also timed under
# torch.compile (--compile-all: every sample).
TENSOR_SAMPLES = {"jacobi_2d", "gesummv", "softmax_tensor", "heat_3d", "syrk", "inplace_shift",
                  "outer_product", "reductions_axes", "host_tensor"}
COMPILE_EXTRA = {"vector_add", "softmax_loops", "spmv_csr"}
# NumPy-check sizes (the reference is an interpreted Python loop over every element).
CHECK_SIZE = {1: 16387, 2: (129, 257), 3: (19, 23, 29)}

DEV = "cuda"  # set from --device; used by eager functions that allocate


# ------------------------------------------------------------------ eager torch equivalents
def _torch_table():
    import torch

    def linrec(a, b, x, N):  # x[i] = x[i-1] * a[i] + b[i]: a log-step (Hillis-Steele) scan
        A, B = a[:N].clone(), b[:N].clone()
        A[0], B[0] = 0, x[0]
        d = 1
        while d < N:
            B[d:] = A[d:] * B[:-d] + B[d:]
            A[d:] = A[d:] * A[:-d]
            d *= 2
        x[:N].copy_(B)

    def col_extremes(A, hi, lo, M, N):
        hi[:N].copy_(A[:M, :N].amax(0))
        lo[:N].copy_(A[:M, :N].amin(0))

    def col_moments(A, mean, spread, lo, M, N):
        rows = A[lo:M, :N]
        mean[:N].copy_(rows.sum(0) / (M - lo))
        i = torch.arange(lo, M, device=A.device, dtype=A.dtype)[:, None]
        spread[:N].copy_(-(rows * rows * i).sum(0))

    def spmv(indptr, indices, data, x, y, rows):
        A = torch.sparse_csr_tensor(indptr, indices, data, size=(rows, x.numel()))
        y[:rows].copy_(A @ x)

    def stencil(A, B, L, M, N):
        c = A[1:L - 1, 1:M - 1, 1:N - 1]
        B[1:L - 1, 1:M - 1, 1:N - 1] = (
            A[:L - 2, 1:M - 1, 1:N - 1] + A[2:L, 1:M - 1, 1:N - 1] + A[1:L - 1, :M - 2, 1:N - 1]
            + A[1:L - 1, 2:M, 1:N - 1] + A[1:L - 1, 1:M - 1, :N - 2] + A[1:L - 1, 1:M - 1, 2:N]
            - 6.0 * c)

    def count(bins, hist, N):
        hist += torch.bincount(bins[:N], minlength=hist.numel()).to(hist.dtype)

    def scatter(how):
        return lambda keys, vals, out, N: out.scatter_reduce_(0, keys[:N].long(), vals[:N], how)

    def builtins_mix(X, I, Y, K, N):
        x = X[:N]
        Y[:N] = I[:N].to(X.dtype) * 0.5 + x.clamp(max=1.0) - x.clamp(min=-1.0) + x.abs()
        K[:N] = (x * 4.0).to(K.dtype)

    def mask_ops(X, mask, Y, pos, N):
        Y[:N] = torch.where(mask[:N], X[:N], -X[:N])
        pos[:N] = X[:N] > 0.0

    def gather_scatter(x, w, idx, perm, y, N):
        p = perm[:N].long()
        y[p] = x[idx[:N]] * w[p]

    def shifted_copy(A, N):
        out = A.clone()
        out[1:N] = A[:N - 1] + out[1:N]
        return out

    def transcendental(X, Y, N):
        x = X[:N]
        Y[:N] = (torch.tanh(x) + torch.sin(x) * torch.cos(x) + torch.exp(-x.abs())
                 + torch.sqrt(x.abs()) + torch.log(1.0 + x * x))

    def vadd(A, B, C, N):
        C[:N] = A[:N] + B[:N]

    def axpy_range(a, X, Y, start, stop, step):
        Y[start:stop:step] += a * X[start:stop:step]

    def dot(A, B, s, N):
        s += (A[:N] * B[:N]).sum()

    def row_reduce(f):
        return lambda A, out, M, N: out[:M].copy_(f(A[:M, :N], A))

    # ---- tensor-oriented model samples: NumPy-style slice arithmetic on tensors
    def jacobi5(X, M, N):
        return 0.2 * (X[1:M - 1, 1:N - 1] + X[1:M - 1, :N - 2] + X[1:M - 1, 2:N]
                      + X[2:M, 1:N - 1] + X[0:M - 2, 1:N - 1])

    def jacobi_2d(A, B, M, N, T):
        for _ in range(T):
            B[1:M - 1, 1:N - 1] = jacobi5(A, M, N)
            A[1:M - 1, 1:N - 1] = jacobi5(B, M, N)

    def gesummv(alpha, beta, A, B, x, y, tmp, M, N):
        tmp[:M] = beta * (B[:M, :N] @ x[:N])
        y[:M] = alpha * (A[:M, :N] @ x[:N]) + tmp[:M]

    def gesummv_one(alpha, beta, A, B, x, y, M, N):
        y[:M] = alpha * (A[:M, :N] @ x[:N]) + beta * (B[:M, :N] @ x[:N])

    def softmax_explicit(a, b, M, N):  # the exp / max / sum form of the sample
        e = torch.exp(a[:M, :N] - a[:M, :N].amax(dim=1, keepdim=True))
        b[:M, :N] = e / e.sum(dim=1, keepdim=True)

    def heat_3d(A, B, L, M, N):
        c = A[1:L - 1, 1:M - 1, 1:N - 1]
        B[1:L - 1, 1:M - 1, 1:N - 1] = (
            0.125 * (A[2:L, 1:M - 1, 1:N - 1] - 2.0 * c + A[0:L - 2, 1:M - 1, 1:N - 1])
            + 0.125 * (A[1:L - 1, 2:M, 1:N - 1] - 2.0 * c + A[1:L - 1, 0:M - 2, 1:N - 1])
            + 0.125 * (A[1:L - 1, 1:M - 1, 2:N] - 2.0 * c + A[1:L - 1, 1:M - 1, 0:N - 2])
            + c)

    def laplace(A, B):
        B[1:-1, 1:-1] = (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]
                         - 4.0 * A[1:-1, 1:-1])

    def syrk(alpha, beta, C, A, N, M):  # lower triangle of alpha A A^T + beta C, upper kept
        a, c = A[:N, :M], C[:N, :N]
        c.copy_(torch.tril(beta * c + alpha * (a @ a.T)) + torch.triu(c, 1))

    def smooth_rows(A, M, N):
        A[:M, 1:N] = 0.5 * (A[:M, :N - 1] + A[:M, 1:N])

    def smooth_vector(x, N):
        x[1:N] = 0.5 * (x[:N - 1] + x[1:N])

    def scale_in_place(A, M, N, s):
        A[:M, :N] = A[:M, :N] * s + 1.0

    def outer(x, y, C, M, N):
        C[:M, :N] = torch.outer(x[:M], y[:N])

    def rank1_update(alpha, x, y, C, M, N):
        C[:M, :N] += alpha * torch.outer(x[:M], y[:N])

    def batched_outer(x, y, C, B, M, N):
        C[:B, :M, :N] = x[:B, :M, None] * y[:B, None, :N] + C[:B, :M, :N]

    def scale_product(A, B, w, M, N):
        s = torch.sum(A, dim=1) + 1.0
        s[1:-1] = 0.5 * (s[2:] + s[:-2])
        C = A @ B
        C = torch.clamp(C, min=-1.0)  # np.maximum(C, -1.0)
        C[:M, :N] = C[:M, :N] / torch.abs(s[:M, None]) + w[None, :N]
        return C

    return {
        "vector_add.vector_add": vadd,
        "vector_add.vector_add_simd": vadd,
        "vector_add.vector_add_shape": lambda A, B, C: C.copy_(A + B),
        "vector_add.axpy_range": axpy_range,
        "dot_atomic.dot": dot,
        "dot_atomic.neg_sum": lambda A, s, N: s.sub_(A[:N].sum()),
        "dot_atomic.dot_fp64": dot,
        "spmv_csr.spmv": lambda p, c, v, x, y, N: spmv(p, c, v, x, y, N - 1),
        "spmv_csr.spmv_acc": spmv,
        "group_by_sum.group_by_sum":
            lambda X, lab, cen, M, N: cen[:, :N].index_add_(0, lab[:M], X[:M, :N]),
        "group_by_sum.group_count": count,
        "nested_parallel_2d.add_transpose":
            lambda A, B, C, M, N, al: C[:M, :N].copy_(al * A[:M, :N] + B[:N, :M].T),
        "nested_parallel_2d.scale_shape": lambda A, C, beta: C.copy_(A * beta - 1.0),
        "nested_parallel_2d.stencil_3d": stencil,
        "sequential_prefix.prefix_sum":
            lambda x, out, N: out[:N].copy_(torch.cumsum(x[:N], 0)),
        "sequential_prefix.linear_recurrence": linrec,
        "row_max_negative.row_max": row_reduce(lambda a, A: a.amax(1)),
        "row_max_negative.row_range": row_reduce(lambda a, A: a.amax(1) - a.amin(1)),
        "row_max_negative.row_min_minus_last":
            row_reduce(lambda a, A: a.amin(1) - A[:a.shape[0], -1]),
        "fp64_axpby.axpby": lambda al, X, be, Y, N: Y[:N].copy_(al * X[:N] + be * Y[:N]),
        "fp64_axpby.gemv_fp64":
            lambda A, x, y, M, N, beta: y[:M].copy_(beta * y[:M] + A[:M, :N] @ x[:N]),
        "strided_views.scale_add_2d":
            lambda A, B, C, M, N, al: C[:M, :N].copy_(al * A[:M, :N] + B[:M, :N]),
        "strided_views.row_sums": lambda A, x, y, M, N: y[:M].copy_(A[:M, :N] @ x[:N]),
        "softmax_loops.softmax":
            lambda a, b, M, N: b[:M, :N].copy_(torch.softmax(a[:M, :N], dim=1)),
        "atomic_minmax_hist.scatter_max": scatter("amax"),
        "atomic_minmax_hist.scatter_min_simd": scatter("amin"),
        "atomic_minmax_hist.scatter_min_int": scatter("amin"),
        "atomic_minmax_hist.histogram": count,
        "atomic_minmax_hist.histogram64": count,
        "math_funcs.transcendental": transcendental,
        "math_funcs.clip_where": lambda X, Y, lo, hi, N: Y[:N].copy_(
            torch.where(X[:N] > 0.0, X[:N].clamp(max=hi), X[:N].clamp(min=lo))),
        "math_funcs.builtins_mix": builtins_mix,
        "math_funcs.mask_ops": mask_ops,
        "math_funcs.inf_cap": lambda X, Y, N: Y[:N].copy_(
            torch.where(X[:N] > 1.0, float("inf"), X[:N])),
        "vidx_manual.vadd_strips": vadd,
        "vidx_manual.row_scale":
            lambda A, s, y, M, N: y[:M, :N].copy_(A[:M, :N] * s[:M, None] + 1.0),
        "index_exprs.affine_2d": lambda A, B, M, N: B[:M, 1:N].copy_(
            A[1:2 * M:2, 0:N - 1] - A[0:2 * M:2, 1:N]),
        "index_exprs.gather_scatter": gather_scatter,
        "index_exprs.last_columns": lambda A, out, M: out[:M].copy_(
            A[:M, -1] - 2.0 * A[:M, -2] + A[:M, A.shape[1] - 3]),
        "host_alloc.relu_new": lambda A, N: A.clamp(min=0.0),
        "host_alloc.row_sums_new": lambda A, M, N: A[:M, :N].sum(1, dtype=torch.float64),
        "host_alloc.scaled_copy_2d": lambda A, M, N: (A[:M, :N] * 2.0).to(torch.float32),
        "host_alloc.fill_add":
            lambda N: 2.5 + torch.arange(N, dtype=torch.float64, device=DEV),
        "host_alloc.shifted_copy": shifted_copy,
        "slice_rows.axpy_rows": lambda A, B, C, M, N, al: C[:M, :N].copy_(
            A[:M, :N] * al + B[:M, :N]),
        "slice_rows.tanh_rows_inplace": lambda A, M, N: A[:M, :N].copy_(
            torch.tanh(A[:M, :N]) * 0.5),
        "slice_rows.shift_rows": lambda A, B, M, N: B[:M, 1:N].copy_(A[:M, 0:N - 1] * 2.0),
        # tensor-oriented model
        "jacobi_2d.jacobi_2d": jacobi_2d,
        "gesummv.gesummv": gesummv,
        "gesummv.gesummv_one_statement": gesummv_one,
        "softmax_tensor.softmax":
            lambda a, b, M, N: b[:M, :N].copy_(torch.softmax(a[:M, :N], dim=1)),
        "softmax_tensor.softmax_rows": softmax_explicit,
        "softmax_tensor.softmax_short_rows":
            lambda a, b, M, N: b[:M, :N].copy_(torch.softmax(a[:M, :N], dim=1)),
        "heat_3d.heat_3d": heat_3d,
        "heat_3d.heat_3d_tiles": heat_3d,
        "heat_3d.laplace_open_bounds": laplace,
        "syrk.syrk": syrk,
        "inplace_shift.smooth_rows": smooth_rows,
        "inplace_shift.smooth_vector": smooth_vector,
        "inplace_shift.scale_in_place": scale_in_place,
        "outer_product.outer": outer,
        "outer_product.rank1_update": rank1_update,
        "outer_product.batched_outer": batched_outer,
        "reductions_axes.row_sums":
            lambda A, r, M, N: r[:M].copy_(torch.sum(A[:M, :N], dim=1)),
        "reductions_axes.col_max":
            lambda A, c, M, N: c[:N].copy_(torch.amax(A[:M, :N], dim=0)),
        "reductions_axes.total": lambda A, s, M, N: s[0].copy_(torch.sum(A[:M, :N])),
        "reductions_axes.row_dots":
            lambda A, B, out, M, N: out[:M].copy_((A[:M, :N] * B[:M, :N]).sum(dim=1)),
        "reductions_axes.col_means":
            lambda A, m, M: m.copy_(torch.sum(A[:M, :], dim=0) / M),
        "reductions_axes.add_full": lambda A, B: B.copy_(A + 1.0),
        "reductions_axes.row_min":
            lambda A, r, M, N: r[:M].copy_(torch.amin(A[:M, :N], dim=1)),
        "reductions_axes.leaky_rows": lambda A, B, M, N, slope: B[:M, :N].copy_(
            torch.where(A[:M, :N] > 0.0, A[:M, :N], slope * A[:M, :N])),
        "host_tensor.scale_product": scale_product,
        # column reductions (the rows of most are split over programs: passes/split_rows.rs)
        "column_reductions.col_sums":
            lambda A, out, M, N: out[:N].copy_(A[:M, :N].sum(0)),
        "column_reductions.atv": lambda beta, A, y, z, x, M, N: x[:N].add_(
            beta * (y[:M] @ A[:M, :N]) + z[:N]),
        "column_reductions.col_extremes": col_extremes,
        "column_reductions.col_moments": col_moments,
        "column_reductions.col_offsets":
            lambda A, out, M, N: out[:N].copy_(1.0 + M * (A[0, :N] * 0.5)),
        "column_reductions.col_sums_auto":
            lambda A, out, M, N: out[:N].copy_((A[:M, :N] * 2.0).sum(0)),
        "column_reductions.gram": lambda A, C, M, N: C[:N, :N].copy_(A[:M, :N].T @ A[:M, :N]),
    }


# ------------------------------------------------------------------ --generate (CPU, has appyc)
def generate(out_dir: Path, appyc: Path) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for src in sorted(SAMPLES.glob("*.py")):
        out = out_dir / f"{src.stem}_gen.py"
        proc = subprocess.run([str(appyc), str(src), "-o", str(out)],
                              capture_output=True, text=True, timeout=120)
        ok = proc.returncode == 0 and out.exists()
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {src.name} -> {out}")
        if not ok:
            print(proc.stderr.strip()[-2000:])
    return 1 if failed else 0


# ------------------------------------------------------------------ GPU (or --device cpu) mode
def import_difftest():
    """tests/difftest/test_samples.py imports pytest at the top; stub it where it is missing."""
    sys.path.insert(0, str(DIFFTEST))  # also makes `import appy` find the NumPy shim
    try:
        import pytest  # noqa: F401
    except ImportError:
        def ident(*a, **k):  # @fixture, @fixture(...), @mark.x(...)
            return a[0] if len(a) == 1 and callable(a[0]) and not k else (lambda f: f)
        stub = types.ModuleType("pytest")
        stub.fixture, stub.param = ident, (lambda *a, **k: a)
        stub.mark = type("Mark", (), {"__getattr__": lambda self, name: ident})()
        sys.modules["pytest"] = stub
    import cases
    import test_samples
    return cases, test_samples


def compare(expected, actual, to_numpy):
    """(ok, worst error) over paired arrays; error relative to max(1, max|ref|), ints exact."""
    import numpy as np

    ok, worst = True, 0.0
    for e, a in zip(expected, actual):
        if e is None and a is None:
            continue
        if e is None or a is None:
            return False, "return value missing or unexpected"
        e, a = np.asarray(to_numpy(e)), to_numpy(a)
        if e.shape != a.shape or e.dtype != a.dtype:
            return False, f"{a.dtype}{list(a.shape)} != {e.dtype}{list(e.shape)}"
        if e.dtype.kind in "biu":
            err = float(np.abs(a.astype(np.int64) - e.astype(np.int64)).max(initial=0))
            ok &= err == 0
        else:
            rtol = 1e-9 if e.dtype == np.float64 else 1e-4
            same = (a == e) | (np.isnan(a) & np.isnan(e))
            with np.errstate(invalid="ignore"):  # inf - inf where both are inf
                d = np.nan_to_num(np.where(same, 0.0, np.abs(a.astype(np.float64) - e)), nan=np.inf)
            finite = np.abs(e[np.isfinite(e)])
            scale = max(1.0, float(finite.max(initial=0.0)))
            ok &= bool(np.all(d <= rtol * (np.abs(e) + scale)))
            err = float(d.max(initial=0.0)) / scale
        worst = max(worst, err)
    return ok, worst


def fmt_size(size):
    return "x".join(map(str, size)) if isinstance(size, tuple) else str(size)


def verdict(ok, err):
    return f"FAIL: {err}" if isinstance(err, str) else f"{'PASS' if ok else 'FAIL'} ({err:.1e})"


def bench_case(case, size, check_size, ts, gen_fn, ref_fn, eager_fn, device, compiled_fn=None):
    import numpy as np
    import torch

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    row = {"id": f"{case.sample}.{case.func}", "size": fmt_size(size)}
    # 1. NumPy reference (CPU) vs compiled (device), same inputs, moderate size.
    args = case.make(np.random.default_rng(ts.seed_for(case, check_size)), check_size)
    np_args, np_bases = ts.materialize(args, "numpy")
    t_args, t_bases = ts.materialize(args, "torch")
    e_ret = ref_fn(*np_args)
    returns = e_ret is not None  # else the eager result of `x.copy_(...)` is not a return value
    a_ret = gen_fn(*t_args)
    sync()
    row["numpy"] = verdict(*compare(np_bases + [e_ret], t_bases + [a_ret], ts.to_numpy))
    row["numpy"] += f" @{fmt_size(check_size)}"
    del t_args, t_bases, a_ret

    # 2. compiled vs eager torch at the benchmark size; the first compiled call autotunes.
    args = case.make(np.random.default_rng(ts.seed_for(case, size)), size)
    g_args, g_bases = ts.materialize(args, "torch")
    e_args, e_bases = ts.materialize(args, "torch")
    if compiled_fn is not None:
        c_args, c_bases = ts.materialize(args, "torch")
    del args
    t0 = time.perf_counter()
    g_ret = gen_fn(*g_args)
    sync()
    row["first_s"] = time.perf_counter() - t0
    e_ret = eager_fn(*e_args)
    e_ret = e_ret if returns else None
    sync()
    row["torch"] = verdict(*compare(e_bases + [e_ret], g_bases + [g_ret], ts.to_numpy))
    del g_ret

    # 2b. torch.compile of the eager function: compiled on its first call (timed: compile_s),
    # its result checked against eager torch. A failure only marks the compiled columns.
    if compiled_fn is not None:
        try:
            t0 = time.perf_counter()
            c_ret = compiled_fn(*c_args)
            sync()
            row["compile_s"] = time.perf_counter() - t0
            c_ret = c_ret if returns else None
            ok, err = compare(e_bases + [e_ret], c_bases + [c_ret], ts.to_numpy)
            if not ok:
                row["compiled"] = verdict(ok, err)
            del c_ret
        except Exception as exc:
            row["compile_s"] = time.perf_counter() - t0  # counts toward --compile-budget
            msg = " ".join(f"{type(exc).__name__}: {exc}".split())
            print(f"  torch.compile {row['id']}: {msg[:2000]}", flush=True)
            row["compiled"] = f"ERROR {msg[:80]}".replace("|", "/")
            compiled_fn = None
    del e_ret

    # 3. timing: in-place functions keep updating their arrays, which is fine for timing.
    def timed(fn, fargs):
        if device == "cuda":
            import triton.testing
            return triton.testing.do_bench(lambda: fn(*fargs), warmup=25, rep=100,
                                           return_mode="median")
        t0 = time.perf_counter()
        fn(*fargs)
        return (time.perf_counter() - t0) * 1e3

    row["appyc_ms"] = timed(gen_fn, g_args)
    row["torch_ms"] = timed(eager_fn, e_args)
    if compiled_fn is not None:
        try:
            row["compiled_ms"] = timed(compiled_fn, c_args)
        except Exception as exc:  # e.g. a recompile on mutated inputs that fails
            msg = " ".join(f"{type(exc).__name__}: {exc}".split())
            print(f"  torch.compile {row['id']} (timing): {msg[:2000]}", flush=True)
            row["compiled"] = f"ERROR {msg[:80]}".replace("|", "/")
    return row


def run_all(args) -> int:
    global DEV
    DEV = args.device
    if args.device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"  # before anything imports triton
    cases, ts = import_difftest()
    ts.DEVICE = args.device  # materialize() puts torch tensors there
    import numpy as np
    import torch
    import triton

    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("no CUDA device (use --device cpu --small to check the script on a CPU)")
    eager = _torch_table()
    mod_dir = Path(args.modules).resolve()
    modules, rows, seen = {}, [], set()
    start, compile_spent = time.perf_counter(), 0.0
    for case in cases.CASES:
        key = f"{case.sample}.{case.func}"
        if key in seen or (args.only and not any(s in key for s in args.only)):
            continue
        seen.add(key)
        if not case.expect_launch:
            rows.append({"id": key, "size": "-", "numpy": "SKIP (no kernel)"})
            continue
        dims = len(case.sizes[0]) if isinstance(case.sizes[0], tuple) else 1
        if args.small:
            size = check = max(case.sizes, key=lambda s: np.prod(s))
        else:
            size = GPU_SIZES.get(key, DEFAULT_GPU_SIZE[dims])
            check = CHECK_SIZE[dims]
        try:
            if case.sample not in modules:
                path = mod_dir / f"{case.sample}_gen.py"
                modules[case.sample] = ts.load_module(path, f"appyc_gen_{case.sample}")
            gen_fn = getattr(modules[case.sample], case.func)
            ref_fn = getattr(ts.reference_module(case.sample), case.func)
            compiled_fn, skip = None, None
            if args.no_compile:
                skip = "-"
            elif not (args.compile_all or case.sample in TENSOR_SAMPLES | COMPILE_EXTRA):
                skip = "-"
            elif compile_spent > args.compile_budget:
                skip = "SKIP (compile budget)"
            else:
                torch._dynamo.reset()  # each case compiles from scratch: honest compile_s
                compiled_fn = torch.compile(eager[key])
            row = bench_case(case, size, check, ts, gen_fn, ref_fn, eager[key], args.device,
                             compiled_fn)
            if skip:
                row["compiled"] = skip
            compile_spent += row.get("compile_s", 0.0)
        except Exception as exc:  # one failing case must not stop the others
            msg = " ".join(f"{type(exc).__name__}: {exc}".split())[:160]
            row = {"id": key, "size": fmt_size(size), "numpy": f"ERROR {msg}"}
        rows.append(row)
        elapsed = time.perf_counter() - start
        extra = f"compile {row['compile_s']:.1f} s, " if "compile_s" in row else ""
        print(f"{format_row(row)}   [{extra}elapsed {elapsed:.0f} s]", flush=True)
        if args.device == "cuda":
            torch.cuda.empty_cache()

    cuda = args.device == "cuda"
    dev_name = torch.cuda.get_device_name() if cuda else "CPU (TRITON_INTERPRET=1, no benchmark)"
    head = ["# appyc vs eager torch\n",
            f"- device: {dev_name}",
            f"- torch {torch.__version__}, triton {triton.__version__}, "
            f"python {sys.version.split()[0]}",
            "- correct: NumPy reference (CPU) vs appyc, at the size after @; vs torch: appyc vs "
            "eager torch at the benchmark size; (err) = max |diff| / max(1, max|ref|)",
            "- ms: do_bench median after a first (autotuning) call; speedup = torch ms / "
            "appyc ms (>1: appyc faster)" if cuda else
            "- ms: one time.perf_counter call each (interpreter)",
            "- compiled: torch.compile (default mode) of the eager-torch function, compiled on a "
            "first untimed call (compile s: that call's wall time); its result is checked "
            "against eager torch (FAIL shown in the cell); vs compiled = compiled ms / appyc ms; "
            "`-`: not compiled (only the tensor-model samples and "
            f"{', '.join(sorted(COMPILE_EXTRA))} unless --compile-all; none with --no-compile)",
            f"- total wall time {time.perf_counter() - start:.0f} s, of which torch.compile "
            f"first calls {compile_spent:.0f} s\n",
            "| sample.function | size | correct (NumPy) | vs torch | appyc ms | torch ms "
            "| speedup | compiled ms | vs compiled | compile s |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    table = "\n".join(head + [format_row(r) for r in rows]) + "\n"
    print("\n" + table)
    if args.out:
        Path(args.out).write_text(table)
        print(f"wrote {args.out}")
    bad = [r for r in rows if not r["numpy"].startswith(("PASS", "SKIP"))
           or not r.get("torch", "PASS").startswith("PASS")]
    return 1 if bad else 0


def format_row(r):
    a, t, c = r.get("appyc_ms"), r.get("torch_ms"), r.get("compiled_ms")
    ms = lambda v: "-" if v is None else f"{v:.4g}"  # noqa: E731
    speed = f"{t / a:.2f}x" if a and t else "-"
    c_speed = f"{c / a:.2f}x" if a and c else "-"
    # compiled cell: the time, with a FAIL verdict in front if its result differs from eager;
    # or ERROR / SKIP / - when it did not run.
    c_cell = " ".join(x for x in (r.get("compiled"), None if c is None else ms(c)) if x) or "-"
    comp_s = f"{r['compile_s']:.1f}" if "compile_s" in r else "-"
    return (f"| {r['id']} | {r['size']} | {r['numpy']} | {r.get('torch', '-')} | {ms(a)} "
            f"| {ms(t)} | {speed} | {c_cell} | {c_speed} | {comp_s} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--generate", metavar="DIR", help="compile every sample into DIR (needs appyc)")
    p.add_argument("--appyc", default=os.environ.get("APPYC_BIN", REPO / "target/release/appyc"))
    p.add_argument("--modules", metavar="DIR", help="run the modules compiled into DIR")
    p.add_argument("--out", metavar="RESULTS.md", help="write the markdown table here")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--small", action="store_true", help="difftest sizes (for --device cpu)")
    p.add_argument("--only", action="append", default=[], help="substring of sample.function")
    p.add_argument("--no-compile", action="store_true", help="skip the torch.compile columns")
    p.add_argument("--compile-all", action="store_true",
                   help="torch.compile every sample, not only the tensor-model ones and "
                        + ", ".join(sorted(COMPILE_EXTRA)))
    p.add_argument("--compile-budget", type=float, default=300.0, metavar="S",
                   help="stop compiling new cases once their first (compiling) calls have "
                        "taken S seconds in all (default 300: keeps a full H100 run < 9 min)")
    args = p.parse_args()
    if args.generate:
        sys.exit(generate(Path(args.generate), Path(args.appyc)))
    if not args.modules:
        p.error("give --generate DIR or --modules DIR")
    sys.exit(run_all(args))


if __name__ == "__main__":
    main()
