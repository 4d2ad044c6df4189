"""Differential-test cases: one entry per (sample, function), with input generators.

A generator is `make(rng, size) -> list of arguments`. An argument is a NumPy array, a Python
scalar, or a `View` (a base array plus a function that takes the same strided view of it on both
the NumPy and the torch side). Floats are standard normal unless the case needs a sign (max of
all-negative rows); indices are random integers; nothing is all zeros.

Sizes are kept small (the Triton interpreter runs every program instance in Python) and none is a
multiple of 16, so vectors always end in a partial, masked strip. `mvls` lists the APPYC_MVL values
a case runs with; 16 makes multi-strip loops appear at small sizes.
"""
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

F32 = np.float32
F64 = np.float64
I32 = np.int32
I64 = np.int64


@dataclass
class View:
    """A strided view `how(base)`; the harness copies `base` and applies `how` on each side."""
    base: np.ndarray
    how: Callable[[Any], Any]
    label: str


@dataclass
class Case:
    sample: str                      # file stem in samples/
    func: str                        # function name in that sample
    make: Callable[[np.random.Generator, Any], list]
    sizes: Sequence[Any]             # each passed to make(); ints or tuples
    mvls: Sequence[int] = (16, 128)
    tol: dict = field(default_factory=dict)  # dtype name -> (rtol, atol), overrides the default
    expect_launch: bool = True       # False for functions without pragmas
    fp64_strict: bool = False        # float64 results must match to 1e-12 (rtol and atol)
    variant: str = ""                # distinguishes several cases of one function
    xfail: str = ""                  # known appyc limitation: the reason (test runs, may fail)
    env: dict = field(default_factory=dict)  # environment for the calls (e.g. APPYC_TILES=0)
    launches: Sequence[str] = ()     # each must be a substring of some launched kernel's name
    no_launches: Sequence[str] = ()  # none may be a substring of one (`name$`: end of a name)

    @property
    def id(self):
        return f"{self.sample}.{self.func}" + (f"[{self.variant}]" if self.variant else "")


def relax_from(A, n, tol, max_iter=500):
    """A relaxation's arguments with B a copy of A (fixed ends agree, so the sweeps converge)."""
    return [A, A.copy(), n, tol, max_iter]


def normal(rng, shape, dtype=F32):
    return rng.standard_normal(shape).astype(dtype)


def ints(rng, lo, hi, shape, dtype=I32):
    return rng.integers(lo, hi, size=shape).astype(dtype)


def csr(rng, rows, cols, dtype_idx, max_nnz=40):
    """Random CSR matrix: row lengths 0..max_nnz (row 1 empty, row 0 longer than 32)."""
    lengths = rng.integers(0, max_nnz + 1, size=rows)
    lengths[0] = max_nnz + 5 if rows > 0 else 0
    if rows > 1:
        lengths[1] = 0
    indptr = np.zeros(rows + 1, dtype=dtype_idx)
    indptr[1:] = np.cumsum(lengths)
    nnz = int(indptr[-1])
    indices = rng.integers(0, cols, size=nnz).astype(dtype_idx)
    data = normal(rng, nnz)
    return indptr, indices, data


def smooth_pair(rng, n):
    """A smooth wave of period 24 elements (random amplitude) and a copy: what a relaxation
    without damping converges from (a random start keeps its alternating mode forever)."""
    x = np.sin(np.pi * np.arange(n) / 12) * (1.0 + 0.1 * rng.standard_normal())
    return [x, x.copy()]


def distances(rng, n):
    """Non-negative edge weights with a zero diagonal (Floyd-Warshall's input)."""
    d = rng.uniform(1.0, 10.0, size=(n, n)).astype(F32)
    np.fill_diagonal(d, 0.0)
    return d


def _matmul_args(func, r, s, dtype):
    """Arguments of a samples/matmul_loops.py function for sizes s = (rows, cols, depth)."""
    m, n, k = s
    a = lambda *shape: normal(r, shape, dtype)
    return {
        "gemm_updates": lambda: [1.5, 1.2, a(m, n), a(m, k), a(k, n)],
        "gemm_acc": lambda: [1.5, 1.2, a(m, n), a(m, k), a(k, n)],
        "trmm_into": lambda: [1.5, a(m, m), a(m, n), a(m, n)],
        "symm_lower": lambda: [1.5, 1.2, a(m, n), a(m, m), a(m, n)],
        "syr2k_diff": lambda: [1.5, 1.2, a(m, m), a(m, k), a(m, k)],
        "cov_upper": lambda: [a(k, m), a(m, m)],
        "band_from_column": lambda: [a(m, k), a(k, n), a(m, n)],
        "gemm_tf32": lambda: [a(m, n), a(m, k), a(k, n)],
        "row_times_matrix": lambda: [a(m, n), a(m, k), a(k, n)],
        "row_times_matrix_scaled": lambda: [1.5, 1.2, a(m, n), a(m, k), a(k, n)],
        "matrix_times_row": lambda: [a(m, n), a(m, k), a(n, k)],
        "gemm_statement": lambda: [1.5, 1.2, a(m, n), a(m, k), a(k, n)],
        "dot_rows": lambda: [a(m, n), a(m, k + 1), a(k, n)],
    }[func]()


MATMUL_FUNCS = ["gemm_updates", "gemm_acc", "trmm_into", "symm_lower", "syr2k_diff",
                "cov_upper", "band_from_column", "gemm_tf32", "row_times_matrix",
                "row_times_matrix_scaled", "matrix_times_row", "gemm_statement", "dot_rows"]
MATMUL_TILE_SIZES = ((70, 67, 37), (5, 3, 17))  # across a 64-wide tile; less than one
MATMUL_GENERAL_SIZES = ((19, 21, 17),)  # one program per row: the interpreter is slow there
MATMUL_TOL = {"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10)}
TF32_TOL = {"float32": (1e-2, 1e-2), "float64": (1e-10, 1e-10)}  # on a GPU, TF32 products


def matmul_cases():
    out = []
    variants = [  # (dtype, variant, env, tiled)
        (F64, "", {}, True),
        (F32, "f32", {}, True),
        (F64, "untiled", {"APPYC_TILES": "0"}, False),
        (I64, "int64", {}, False),  # tl.dot takes no int64: the general kernel runs
    ]
    for f in MATMUL_FUNCS:
        for dtype, variant, env, tiled in variants:
            def make(r, s, f=f, dtype=dtype):
                if dtype == I64:
                    return _int_args(_matmul_args(f, r, s, F64))
                return _matmul_args(f, r, s, dtype)
            out.append(Case(
                "matmul_loops", f, make,
                MATMUL_TILE_SIZES if tiled else MATMUL_GENERAL_SIZES,
                mvls=(16,), tol=TF32_TOL if f == "gemm_tf32" else MATMUL_TOL,
                variant=variant, env=env,
                launches=("_tiles",) if tiled else (),
                no_launches=() if tiled else ("_tiles",)))
    return out


# (M rows, N columns); 140 rows make three splits of a split row tile under the interpreter
# (passes/split_rows.rs), the last one ragged.
COLRED_SIZES = ((140, 29), (5, 150), (33, 131))


def column_reduction_cases():
    """samples/column_reductions.py in fp32 and fp64 (fp64 to 1e-12: a reassociated sum)."""
    def gen(f, dt):
        def make(r, s):
            m, n = s
            return {
                "col_sums": lambda: [normal(r, s, dt), normal(r, n, dt), m, n],
                "atv": lambda: [1.5, normal(r, s, dt), normal(r, m, dt), normal(r, n, dt),
                                normal(r, n, dt), m, n],
                "col_extremes": lambda: [normal(r, s, dt), normal(r, n, dt), normal(r, n, dt),
                                         m, n],
                "col_moments": lambda: [normal(r, s, dt), normal(r, n, dt), normal(r, n, dt),
                                        2, m, n],
                "col_offsets": lambda: [normal(r, s, dt), normal(r, n, dt), m, n],
                "col_sums_auto": lambda: [normal(r, s, dt), normal(r, n, dt), m, n],
                "gram": lambda: [normal(r, (m, n), dt), normal(r, (n, n), dt), m, n],
                "col_prefix": lambda: [normal(r, s, dt), normal(r, s, dt), m, n],
                "col_decay": lambda: [normal(r, s, dt) * 0.1, normal(r, n, dt), m, n],
                "col_running_max": lambda: [normal(r, s, dt), normal(r, n, dt), m, n],
                "scaled_col_sums": lambda: [normal(r, s, dt), normal(r, m, dt), normal(r, n, dt),
                                            m, n],
                # The update's vectors in fp64 whatever A is: A keeps its dtype when updated.
                "rank2_atv": lambda: [1.5, normal(r, s, dt), normal(r, m, F64), normal(r, n, F64),
                                      normal(r, m, F64), normal(r, n, F64), normal(r, m, dt),
                                      normal(r, n, dt), normal(r, n, dt), m, n],
                "rank1_shifted_sums": lambda: [normal(r, s, dt), normal(r, m, dt),
                                               normal(r, n, dt), normal(r, n, dt), m, n],
                "rank2_atv_ax": lambda: rank2_atv_ax(r, s, dt),
            }[f]()
        return make

    def rank2_atv_ax(r, s, dt):
        # alpha, beta, A, the update's vectors (fp64), w (rows), x, y (rows), z, M, N
        m, n = s
        return [0.7, 1.5, normal(r, s, dt), normal(r, m, F64), normal(r, n, F64), normal(r, m, F64),
                normal(r, n, F64), normal(r, m, dt), normal(r, n, dt), normal(r, m, dt),
                normal(r, n, dt), m, n]

    def ints_of(f, dt):
        # Integer matrices: max/min's identity is the dtype's extreme, not an infinity.
        return lambda r, s: [x.astype(dt) for x in _int_args(gen(f, F64)(r, s)[:-2])] + list(s)
    out = []
    for f in ("col_sums", "atv", "col_extremes", "col_moments", "col_offsets", "col_sums_auto",
              "gram", "col_prefix", "col_decay", "col_running_max", "scaled_col_sums",
              "rank2_atv", "rank1_shifted_sums", "rank2_atv_ax"):
        for dt, variant in ((F32, ""), (F64, "fp64")):
            env = {"APPYC_TILES": "0"} if f == "gram" else {}
            # rank2_atv's and rank2_atv_ax's updates run inside their reductions' kernels;
            # rank1_shifted_sums' does not.
            no_launches = {"gram": ("_tiles",), "rank2_atv": ("_rank2_atv_kernel0",),
                           "rank2_atv_ax": ("_rank2_atv_ax_kernel0",)}.get(f, ())
            launches = {"rank1_shifted_sums": ("_rank1_shifted_sums_kernel0",
                                               "_rank1_shifted_sums_kernel1"),
                        "rank2_atv_ax": ("_rank2_atv_ax_kernel1", "_rank2_atv_ax_kernel2")}.get(f, ())
            out.append(Case("column_reductions", f, gen(f, dt), COLRED_SIZES,
                            mvls=(16, 64, 128), tol=SUM32, fp64_strict=dt == F64,
                            variant=variant, env=env, launches=launches,
                            no_launches=no_launches))
    for f in ("col_sums", "col_extremes"):
        for dt, variant in ((I64, "int64"), (I32, "int32")):
            out.append(Case("column_reductions", f, ints_of(f, dt), COLRED_SIZES,
                            mvls=(16, 64), variant=variant))
    return out


def _int_args(args):
    """Integer arrays (small values, so sums stay exact) and integer scalars."""
    return [np.round(x * 3).astype(I64) if isinstance(x, np.ndarray) else 2 for x in args]


# Reductions in fp32 are summed in a different order by the kernel: loosen atol for those.
RED32 = {"float32": (1e-4, 1e-4)}
SUM32 = {"float32": (1e-4, 1e-3)}

SIZES_1D = (37, 1000)
SIZES_1D_SMALL = (37, 333)        # non-simd 1-D parallel loops: one program per element
SIZES_2D = ((19, 29), (5, 150))   # (M, N); 150 > 128 gives two strips even at MVL 128
SIZES_GRID = ((19, 29), (23, 17))  # 2-D grids: one program per element

CASES = [
    # ---------------------------------------------------------------- vector_add
    Case("vector_add", "vector_add",
         lambda r, n: [normal(r, n), normal(r, n), normal(r, n), n],
         SIZES_1D_SMALL, mvls=(128,)),
    Case("vector_add", "vector_add_simd",
         lambda r, n: [normal(r, n), normal(r, n), normal(r, n), n], SIZES_1D + (1,)),
    Case("vector_add", "vector_add_shape",
         lambda r, n: [normal(r, n), normal(r, n), normal(r, n)], SIZES_1D_SMALL, mvls=(16,)),
    Case("vector_add", "axpy_range",
         lambda r, n: [0.75, normal(r, n), normal(r, n), 3, n - 2, 3], (45, 301)),
    Case("vector_add", "axpy_range", variant="negative-step",
         make=lambda r, n: [-1.5, normal(r, n), normal(r, n), n - 1, 0, -2], sizes=(45, 301)),
    Case("vector_add", "axpy_range", variant="empty",   # start >= stop: nothing to launch
         make=lambda r, n: [0.75, normal(r, n), normal(r, n), 3, n - 2, 3], sizes=(3, 5),
         mvls=(128,), expect_launch=False),
    # ---------------------------------------------------------------- dot_atomic
    Case("dot_atomic", "dot",
         lambda r, n: [normal(r, n), normal(r, n), normal(r, 1), n], SIZES_1D, tol=SUM32),
    Case("dot_atomic", "neg_sum",
         lambda r, n: [normal(r, n), normal(r, 1), n], SIZES_1D, tol=SUM32),
    Case("dot_atomic", "dot_fp64",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), normal(r, 1, F64), n], SIZES_1D),
    # ---------------------------------------------------------------- spmv_csr
    Case("spmv_csr", "spmv",
         lambda r, m: (lambda p: [p[0], p[1], p[2], normal(r, m + 5), normal(r, m), m + 1])(
             csr(r, m, m + 5, I64)),
         (37, 101), tol=RED32),
    Case("spmv_csr", "spmv_acc",
         lambda r, m: (lambda p: [p[0], p[1], p[2], normal(r, m + 3), normal(r, m), m])(
             csr(r, m, m + 3, I32)),
         (37, 101), tol=RED32),
    # ---------------------------------------------------------------- group_by_sum
    Case("group_by_sum", "group_by_sum",
         lambda r, s: [normal(r, s), ints(r, 0, 5, s[0], I64), normal(r, (5, s[1])), s[0], s[1]],
         ((57, 19), (100, 37)), tol=RED32),
    Case("group_by_sum", "group_count",
         lambda r, n: [ints(r, 0, 7, n, I32), ints(r, 1, 10, 7, I32), n], SIZES_1D),
    # ---------------------------------------------------------------- nested_parallel_2d
    Case("nested_parallel_2d", "add_transpose",
         lambda r, s: [normal(r, s), normal(r, s[::-1]), normal(r, s), s[0], s[1], 1.5],
         SIZES_GRID, mvls=(128,)),
    Case("nested_parallel_2d", "scale_shape",
         lambda r, s: [normal(r, s), normal(r, s), -0.5], SIZES_GRID, mvls=(16,)),
    Case("nested_parallel_2d", "stencil_3d",
         lambda r, s: [normal(r, s), normal(r, s), *s], ((5, 7, 9), (6, 11, 13)), mvls=(128,)),
    Case("nested_parallel_2d", "upper_scale",  # a triangle: the inner loop runs as a strip
         lambda r, n: [normal(r, (n, n)), normal(r, (n, n)), n], (37, 150), mvls=(16, 128)),
    Case("nested_parallel_2d", "lower_clip",  # a triangle with an `if`: the inner loop in order
         lambda r, n: [normal(r, (n, n)), normal(r, (n, n)), n], (37, 21)),
    # ---------------------------------------------------------------- sequential_prefix
    Case("sequential_prefix", "prefix_sum",
         lambda r, n: [normal(r, n), normal(r, n), n], (37, 777)),
    Case("sequential_prefix", "linear_recurrence",
         lambda r, n: [r.uniform(-0.95, 0.95, n).astype(F32), normal(r, n), normal(r, n), n],
         (37, 500), mvls=(128,)),
    # ---------------------------------------------------------------- row_max_negative
    Case("row_max_negative", "row_max",   # every element < -0.5: a lane read as 0 would win
         lambda r, s: [-np.abs(normal(r, s)) - F32(0.5), normal(r, s[0]), s[0], s[1]],
         SIZES_2D + ((1, 3),)),
    Case("row_max_negative", "row_range",
         lambda r, s: [normal(r, s), normal(r, s[0]), s[0], s[1]], SIZES_2D),
    Case("row_max_negative", "row_min_minus_last",   # every element > 0.5
         lambda r, s: [np.abs(normal(r, s)) + F32(0.5), normal(r, s[0]), s[0], s[1]], SIZES_2D),
    # ---------------------------------------------------------------- fp64_axpby
    Case("fp64_axpby", "axpby",
         lambda r, n: [0.7, normal(r, n, F64), 1.2, normal(r, n, F64), n], SIZES_1D,
         fp64_strict=True),
    Case("fp64_axpby", "gemv_fp64",
         lambda r, s: [normal(r, s, F64), normal(r, s[1], F64), normal(r, s[0], F64),
                       s[0], s[1], 1.2],
         SIZES_2D),
    # ---------------------------------------------------------------- strided_views
    Case("strided_views", "scale_add_2d", variant="T-in,cols2-in,cols2-out",
         make=lambda r, s: [View(normal(r, s[::-1]), lambda a: a.T, "A.T"),
                            View(normal(r, (s[0], 2 * s[1])), lambda a: a[:, ::2], "B[:, ::2]"),
                            View(normal(r, (s[0], 2 * s[1] - 1)), lambda a: a[:, ::2], "C[:, ::2]"),
                            s[0], s[1], 0.5],
         sizes=SIZES_GRID, mvls=(128,)),
    Case("strided_views", "scale_add_2d", variant="T-out",
         make=lambda r, s: [normal(r, s), normal(r, s),
                            View(normal(r, s[::-1]), lambda a: a.T, "C.T"),
                            s[0], s[1], -2.0],
         sizes=((19, 29),), mvls=(16,)),
    Case("strided_views", "row_sums", variant="T,step3,step2",
         make=lambda r, s: [View(normal(r, s[::-1]), lambda a: a.T, "A.T"),
                            View(normal(r, 3 * s[1]), lambda a: a[::3], "x[::3]"),
                            View(normal(r, 2 * s[0]), lambda a: a[::2], "y[::2]"),
                            s[0], s[1]],
         sizes=SIZES_2D, tol=RED32),
    # ---------------------------------------------------------------- softmax_loops
    Case("softmax_loops", "softmax",
         lambda r, s: [normal(r, s), normal(r, s), s[0], s[1]], SIZES_2D),
    # ---------------------------------------------------------------- atomic_minmax_hist
    Case("atomic_minmax_hist", "scatter_max",
         lambda r, n: [ints(r, 0, 13, n, I32), normal(r, n), normal(r, 13), n], SIZES_1D_SMALL),
    Case("atomic_minmax_hist", "scatter_min_simd",
         lambda r, n: [ints(r, 0, 13, n, I64), normal(r, n), normal(r, 13), n], SIZES_1D),
    Case("atomic_minmax_hist", "scatter_min_int",
         lambda r, n: [ints(r, 0, 11, n, I32), ints(r, -1000, 1000, n, I32),
                       ints(r, -200, 200, 11, I32), n], SIZES_1D_SMALL, mvls=(128,)),
    Case("atomic_minmax_hist", "histogram",
         lambda r, n: [ints(r, 0, 9, n, I32), ints(r, 1, 5, 9, I32), n], SIZES_1D),
    Case("atomic_minmax_hist", "histogram64",
         lambda r, n: [ints(r, 0, 9, n, I64), ints(r, 1, 5, 9, I64), n], SIZES_1D_SMALL,
         mvls=(16,)),
    # ---------------------------------------------------------------- math_funcs
    Case("math_funcs", "transcendental",
         lambda r, n: [normal(r, n), normal(r, n), n], SIZES_1D),
    Case("math_funcs", "clip_where",
         lambda r, n: [normal(r, n), normal(r, n), -0.5, 0.75, n], SIZES_1D),
    Case("math_funcs", "builtins_mix",
         lambda r, n: [normal(r, n), ints(r, -50, 50, n, I32), normal(r, n),
                       ints(r, -9, 9, n, I32), n], SIZES_1D_SMALL, mvls=(128,)),
    # int64 counts up to 1e9 and int32 divisors: in float32 (Triton's type for an integer
    # meeting a float literal) the results lose ~1e-7, past float64's tolerance.
    Case("math_funcs", "counts_as_floats",
         lambda r, n: [ints(r, 0, 10**9, n, I64), ints(r, 1, 1000, n, I32), np.zeros(n, F64),
                       np.zeros(n, F64), n], SIZES_1D),
    Case("math_funcs", "mask_ops",
         lambda r, n: [normal(r, n), r.random(n) < 0.5, normal(r, n), r.random(n) < 0.5, n],
         SIZES_1D),
    Case("math_funcs", "inf_cap",
         lambda r, n: [normal(r, n), normal(r, n), n], SIZES_1D),
    # ---------------------------------------------------------------- vidx_manual
    Case("vidx_manual", "vadd_strips",
         lambda r, n: [normal(r, n), normal(r, n), normal(r, n), n], SIZES_1D),
    Case("vidx_manual", "row_scale",
         lambda r, s: [normal(r, s), normal(r, s[0]), normal(r, s), s[0], s[1]], SIZES_2D),
    # ---------------------------------------------------------------- index_exprs
    Case("index_exprs", "affine_2d",
         lambda r, s: [normal(r, (2 * s[0], s[1])), normal(r, s), s[0], s[1]], SIZES_2D),
    Case("index_exprs", "gather_scatter",
         lambda r, n: [normal(r, n), normal(r, n), ints(r, 0, n, n, I64),
                       r.permutation(n).astype(I32), normal(r, n), n], SIZES_1D_SMALL),
    Case("index_exprs", "last_columns",
         lambda r, m: [normal(r, (m, 7)), normal(r, m), m], (37, 201), mvls=(128,)),
    Case("index_exprs", "ramp", lambda r, n: [np.zeros(n), n], SIZES_1D, fp64_strict=True),
    # ---------------------------------------------------------------- host_alloc
    Case("host_alloc", "relu_new", lambda r, n: [normal(r, n), n], SIZES_1D),
    Case("host_alloc", "row_sums_new",
         lambda r, s: [normal(r, s, F64), s[0], s[1]], SIZES_2D),
    Case("host_alloc", "scaled_copy_2d",
         lambda r, s: [normal(r, s), s[0], s[1]], ((19, 29), (7, 13)), mvls=(128,)),
    Case("host_alloc", "fill_add", lambda r, n: [n], SIZES_1D),
    # float64 A: a float32 product plus an int64 element is float64 in NumPy, float32 in Triton
    # (expr.rs leaves array dtypes to Triton's promotion).
    Case("host_alloc", "positional_dtypes", lambda r, n: [normal(r, n, F64), n], SIZES_1D),
    Case("host_alloc", "shifted_copy", lambda r, n: [normal(r, n), n], SIZES_1D_SMALL,
         mvls=(128,)),
    # Allocations dead_allocations must keep (a wrong drop leaves the name unbound).
    Case("host_alloc", "staged_square", lambda r, n: [normal(r, n), normal(r, n), n], SIZES_1D),
    Case("host_alloc", "scale_with_fresh_counts", lambda r, n: [normal(r, n), n], SIZES_1D),
    Case("host_alloc", "plain_axpy",
         lambda r, n: [0.5, normal(r, n), normal(r, n), n], (45, 7), mvls=(128,),
         expect_launch=False),
    # ---------------------------------------------------------------- slice_rows
    Case("slice_rows", "axpy_rows",
         lambda r, s: [normal(r, s), normal(r, s), normal(r, s), s[0], s[1], 1.25], SIZES_2D),
    Case("slice_rows", "tanh_rows_inplace",
         lambda r, s: [normal(r, s), s[0], s[1]], SIZES_2D),
    Case("slice_rows", "shift_rows",
         lambda r, s: [normal(r, s), normal(r, s), s[0], s[1]], SIZES_2D),
    # ================================================================ tensor-oriented model
    # ---------------------------------------------------------------- jacobi_2d
    Case("jacobi_2d", "jacobi_2d",
         lambda r, s: [normal(r, s), normal(r, s), s[0], s[1], 3], SIZES_2D),
    # #pragma distribute: in one process (no PEs) the loop runs as the single-GPU kernel; the
    # PEs' runs are in test_distribute.py, on the stand-in.
    Case("distribute_jacobi2d", "jacobi_2d",
         lambda r, s: [normal(r, s), normal(r, s), s[0], s[1], 3], SIZES_2D),
    Case("distribute_stencils", "smooth_copy_back",
         lambda r, s: [normal(r, s), normal(r, s), s[0], s[1], 3], SIZES_2D),
    Case("distribute_stencils", "jacobi_1d",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 4], SIZES_1D, fp64_strict=True),
    Case("distribute_stencils", "relax_counted",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 5], SIZES_1D, fp64_strict=True),
    Case("distribute_stencils", "three_sweeps",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), normal(r, n, F64), n, 4], SIZES_1D, fp64_strict=True),
    Case("distribute_stencils", "heat_3d",
         lambda r, s: [normal(r, s), normal(r, s), s[0], s[1], s[2], 2], ((9, 6, 5), (5, 4, 37))),
    # ---------------------------------------------------------------- time_loops (persistent)
    # Host time loops become one persistent kernel; under the interpreter it runs one launch
    # per phase with 3 programs, so every grid-stride loop takes several turns.
    # jacobi_1d is a 1-D stencil: temporally blocked (chunks of 24 and groups of 2 iterations
    # under the interpreter; an odd count leaves a short last group), or not when turned off.
    Case("time_loops", "jacobi_1d",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 4], SIZES_1D, fp64_strict=True,
         launches=("_jacobi_1d_persistent0_blocked",)),
    Case("time_loops", "jacobi_1d", variant="odd-steps",
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 5], sizes=(25, 301),
         fp64_strict=True, launches=("_jacobi_1d_persistent0_blocked",)),
    Case("time_loops", "jacobi_1d", variant="fp32",
         make=lambda r, n: [normal(r, n), normal(r, n), n, 3], sizes=(37,),
         launches=("_jacobi_1d_persistent0_blocked",)),
    Case("time_loops", "jacobi_1d", variant="unblocked",
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 4], sizes=SIZES_1D,
         fp64_strict=True, env={"APPYC_TEMPORAL": "0"}, no_launches=("_blocked",)),
    Case("time_loops", "smooth_1d_slices",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), 0.3, n, 5], (5, 37, 1000),
         fp64_strict=True, launches=("_smooth_1d_slices_persistent0_blocked",)),
    # float64 2-D stencils are temporally blocked: under the interpreter the Gluon kernel's
    # Triton twin (16 x 16 tiles owning 8 x 8 at 2 iterations a launch), so these sizes cross
    # tiles and do not divide them, and 5 iterations leave a short last launch and an odd number
    # of them.
    Case("stencils_2d", "jacobi_loops",
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), s[0], s[1], 5], ((37, 45), (5, 150)),
         mvls=(16,), fp64_strict=True, launches=("_jacobi_loops_persistent0_blocked_twin",)),
    Case("stencils_2d", "jacobi_loops", variant="even-steps",
         make=lambda r, s: [normal(r, s, F64), normal(r, s, F64), s[0], s[1], 4],
         sizes=((19, 29), (3, 3)), mvls=(16,), fp64_strict=True,
         launches=("_jacobi_loops_persistent0_blocked_twin",)),
    Case("stencils_2d", "jacobi_loops", variant="fp32",   # float32 blocked too
         make=lambda r, s: [normal(r, s), normal(r, s), s[0], s[1], 3], sizes=((17, 24), (6, 35)),
         mvls=(16,), launches=("_jacobi_loops_persistent0_blocked_twin",)),
    Case("stencils_2d", "jacobi_loops", variant="mixed-dtypes",   # one tile dtype: the plain kernel
         make=lambda r, s: [normal(r, s), normal(r, s, F64), s[0], s[1], 3], sizes=((17, 24),),
         mvls=(16,), launches=("_jacobi_loops_persistent0",), no_launches=("_blocked",)),
    Case("stencils_2d", "jacobi_loops", variant="unblocked",
         make=lambda r, s: [normal(r, s, F64), normal(r, s, F64), s[0], s[1], 5],
         sizes=((37, 45),), mvls=(16,), fp64_strict=True, env={"APPYC_TEMPORAL": "0", "APPYC_TEMPORAL_2D": "1"},
         launches=("_jacobi_loops_persistent0",), no_launches=("_blocked",)),
    Case("stencils_2d", "jacobi_loops", variant="switched-off",   # APPYC_TEMPORAL_2D=0: plain
         make=lambda r, s: [normal(r, s, F64), normal(r, s, F64), s[0], s[1], 5],
         sizes=((37, 45), (9, 20)), mvls=(16,), fp64_strict=True, env={"APPYC_TEMPORAL_2D": "0"},
         launches=("_jacobi_loops_persistent0",), no_launches=("_blocked",)),
    Case("stencils_2d", "jacobi_loops", variant="strided",   # not contiguous: plain kernel
         make=lambda r, s: [View(normal(r, (s[0], 2 * s[1]), F64), lambda a: a[:, ::2], "A[:, ::2]"),
                            normal(r, s, F64), s[0], s[1], 5],
         sizes=((19, 29),), mvls=(16,), fp64_strict=True,
         launches=("_jacobi_loops_persistent0",), no_launches=("_blocked",)),
    Case("stencils_2d", "jacobi_slices",
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), s[0], s[1], 5], ((37, 45), (5, 150)),
         mvls=(16,), fp64_strict=True, launches=("_jacobi_slices_persistent0_blocked_twin",)),
    Case("stencils_2d", "nine_point",
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), s[0], s[1], 5], ((37, 45), (20, 33)),
         mvls=(16,), fp64_strict=True, launches=("_nine_point_persistent0_blocked_twin",)),
    Case("stencils_2d", "upwind",
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), 0.3, s[0], s[1], 7], ((37, 45), (9, 70)),
         mvls=(16,), fp64_strict=True, launches=("_upwind_persistent0_blocked_twin",)),
    Case("stencils_2d", "wide",   # an offset of 2: refused, the plain persistent kernel
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), s[0], s[1], 5], ((19, 29), (7, 33)),
         mvls=(16,), fp64_strict=True, launches=("_wide_persistent0",), no_launches=("_blocked",)),
    Case("stencils_2d", "three_arrays",   # phase 1 reads two arrays: refused
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), normal(r, s, F64), s[0], s[1], 5],
         ((19, 29), (7, 33)), mvls=(16,), fp64_strict=True,
         launches=("_three_arrays_persistent0",), no_launches=("_blocked",)),
    # One stencil a step and `A, B = B, A`: pairs of steps blocked (the twin), the boundary
    # copies run once before; an odd last step on the plain kernel; one step: plain only.
    Case("stencils_2d", "smooth_swap",
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), s[0], s[1], 5], ((37, 45), (5, 150)),
         mvls=(16,), fp64_strict=True,
         launches=("_smooth_swap_persistent0_blocked_twin", "_smooth_swap_persistent0$")),
    Case("stencils_2d", "smooth_swap", variant="even-steps",
         make=lambda r, s: [normal(r, s, F64), normal(r, s, F64), s[0], s[1], 4],
         sizes=((19, 29), (6, 35)), mvls=(16,), fp64_strict=True,
         launches=("_smooth_swap_persistent0_blocked_twin",), no_launches=("_smooth_swap_persistent0$",)),
    Case("stencils_2d", "smooth_swap", variant="one-step",
         make=lambda r, s: [normal(r, s, F64), normal(r, s, F64), s[0], s[1], 1],
         sizes=((19, 29), (6, 35)), mvls=(16,), fp64_strict=True,
         launches=("_smooth_swap_persistent0",), no_launches=("_blocked",)),
    Case("stencils_2d", "smooth_swap", variant="fp32",   # float32 blocked too
         make=lambda r, s: [normal(r, s), normal(r, s), s[0], s[1], 4], sizes=((17, 24), (6, 35)),
         mvls=(16,), launches=("_smooth_swap_persistent0_blocked_twin",),
         no_launches=("_smooth_swap_persistent0$",)),
    Case("stencils_2d", "swap_no_copies",
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), s[0], s[1], 7], ((37, 45), (9, 20)),
         mvls=(16,), fp64_strict=True, launches=("_swap_no_copies_persistent0_blocked_twin",)),
    Case("stencils_2d", "swap_copy_inside",   # a copy into the stencil's rows: refused
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), s[0], s[1], 4], ((19, 29), (7, 33)),
         mvls=(16,), fp64_strict=True,
         launches=("_swap_copy_inside_persistent0",), no_launches=("_blocked",)),
    # 3-D stencils are temporally blocked, streamed by planes: under the interpreter the Gluon
    # kernel's Triton twin (8 x 8 tiles, chunks of about four planes), so these shapes cross
    # tiles and chunks without dividing them; odd step counts end the state in the spare.
    Case("stencils_3d", "heat_loops",
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), 5], ((13, 11, 17), (5, 20, 9)),
         mvls=(16,), fp64_strict=True, launches=("_heat_loops_persistent0_blocked_twin",)),
    Case("stencils_3d", "heat_loops", variant="even-steps",
         make=lambda r, s: [normal(r, s, F64), normal(r, s, F64), 4], sizes=((9, 12, 10), (3, 3, 3)),
         mvls=(16,), fp64_strict=True, launches=("_heat_loops_persistent0_blocked_twin",)),
    Case("stencils_3d", "heat_loops", variant="fp32",   # float32 blocked too
         make=lambda r, s: [normal(r, s), normal(r, s), 3], sizes=((11, 9, 14),),
         mvls=(16,), launches=("_heat_loops_persistent0_blocked_twin",)),
    Case("stencils_3d", "heat_loops", variant="mixed-dtypes",   # one dtype a buffer: plain kernel
         make=lambda r, s: [normal(r, s), normal(r, s, F64), 3], sizes=((11, 9, 14),),
         mvls=(16,), launches=("_heat_loops_persistent0",), no_launches=("_blocked",)),
    Case("stencils_3d", "heat_loops", variant="switched-off",   # APPYC_TEMPORAL_3D=0: plain
         make=lambda r, s: [normal(r, s, F64), normal(r, s, F64), 5], sizes=((13, 11, 17),),
         mvls=(16,), fp64_strict=True, env={"APPYC_TEMPORAL_3D": "0"},
         launches=("_heat_loops_persistent0",), no_launches=("_blocked",)),
    Case("stencils_3d", "heat_loops", variant="strided",   # not contiguous: plain kernel
         make=lambda r, s: [View(normal(r, (s[0], s[1], 2 * s[2]), F64), lambda a: a[:, :, ::2],
                                 "A[:, :, ::2]"), normal(r, s, F64), 3],
         sizes=((7, 9, 11),), mvls=(16,), fp64_strict=True,
         launches=("_heat_loops_persistent0",), no_launches=("_blocked",)),
    Case("stencils_3d", "heat_slices",
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), s[0], s[1], s[2], 5],
         ((13, 11, 17), (5, 20, 9)),
         mvls=(16,), fp64_strict=True, launches=("_heat_slices_persistent0_blocked_twin",)),
    Case("stencils_3d", "plane_diagonals",
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), s[0], s[1], s[2], 5],
         ((13, 11, 17), (7, 19, 9)), mvls=(16,), fp64_strict=True,
         launches=("_plane_diagonals_persistent0_blocked_twin",)),
    Case("stencils_3d", "upwind",
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), 0.2, s[0], s[1], s[2], 7],
         ((13, 11, 17), (6, 14, 21)), mvls=(16,), fp64_strict=True,
         launches=("_upwind_persistent0_blocked_twin",)),
    # One 3-D stencil a step and `A, B = B, A`: pairs of steps blocked, the face copies once
    # before; an odd last step on the plain kernel; turned off, the plain kernel throughout
    # (whose launcher once named a phase's local array and raised NameError).
    Case("stencils_3d", "heat_swap",
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), 5], ((13, 11, 17), (6, 14, 9)),
         mvls=(16,), fp64_strict=True,
         launches=("_heat_swap_persistent0_blocked_twin", "_heat_swap_persistent0$")),
    Case("stencils_3d", "heat_swap", variant="even-steps",
         make=lambda r, s: [normal(r, s, F64), normal(r, s, F64), 4], sizes=((9, 12, 10),),
         mvls=(16,), fp64_strict=True, launches=("_heat_swap_persistent0_blocked_twin",),
         no_launches=("_heat_swap_persistent0$",)),
    Case("stencils_3d", "heat_swap", variant="switched-off",
         make=lambda r, s: [normal(r, s, F64), normal(r, s, F64), 3], sizes=((9, 12, 10),),
         mvls=(16,), fp64_strict=True, env={"APPYC_TEMPORAL_3D": "0"},
         launches=("_heat_swap_persistent0",), no_launches=("_blocked",)),
    Case("stencils_3d", "heat_swap_bare",
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), 6], ((13, 11, 17), (5, 8, 21)),
         mvls=(16,), fp64_strict=True, launches=("_heat_swap_bare_persistent0_blocked_twin",)),
    Case("stencils_3d", "plane_shear",   # a neighbour plane read off-centre: refused
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), s[0], s[1], s[2], 4],
         ((9, 11, 13), (6, 14, 21)), mvls=(16,), fp64_strict=True, launches=("_plane_shear_persistent0",),
         no_launches=("_blocked",)),
    Case("stencils_3d", "three_phases",   # three phases an iteration: refused
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), normal(r, s, F64), s[0], s[1], s[2], 3],
         ((9, 11, 13), (7, 5, 19)), mvls=(16,), fp64_strict=True, launches=("_three_phases_persistent0",),
         no_launches=("_blocked",)),
    Case("time_loops", "floyd_warshall",
         lambda r, n: [distances(r, n), n], (7, 37)),
    Case("time_loops", "independent_phases",   # reads X[N - 1 - i]: no stencil, not blocked
         lambda r, n: [normal(r, n), normal(r, n), normal(r, n), n, 3], SIZES_1D,
         no_launches=("_blocked",)),
    Case("time_loops", "shifted_steps",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 2, 11], SIZES_1D,
         fp64_strict=True),
    Case("time_loops", "shifted_steps", variant="empty",   # no iteration: nothing to launch
         make=lambda r, n: [normal(r, n), normal(r, n), n, 5, 5], sizes=(37,), mvls=(128,),
         expect_launch=False),
    Case("time_loops", "prefix_steps",
         lambda r, n: [normal(r, n, F64), n, 3], (37, 150), fp64_strict=True),
    Case("time_loops", "smooth_2d",
         lambda r, s: [normal(r, s), normal(r, s), s[0], s[1], 3], SIZES_2D),
    Case("time_loops", "yee_steps",
         lambda r, s: [normal(r, s), normal(r, s), normal(r, s), normal(r, 3), s[0], s[1], 3],
         SIZES_2D),
    Case("time_loops", "host_code_in_loop",
         lambda r, n: [normal(r, n), n, 3], SIZES_1D,
         launches=("_host_code_in_loop_persistent0",), no_launches=("_kernel",)),
    # ---------------------------------------------------------------- accumulation_loops
    # Host loops that only accumulate into one array become one region (passes/gather.rs):
    # one launch, no persistent kernel; a product shape gets tl.dot tiles.
    Case("accumulation_loops", "symm_natural",
         lambda r, s: [1.5, 1.2, normal(r, s, F64), normal(r, (s[0], s[0]), F64), normal(r, s, F64)],
         ((37, 45), (5, 150), (70, 21)), fp64_strict=True,
         launches=("_symm_natural_kernel0_tiles",), no_launches=("persistent",)),
    Case("accumulation_loops", "symm_natural", variant="untiled",
         make=lambda r, s: [1.5, 1.2, normal(r, s, F64), normal(r, (s[0], s[0]), F64), normal(r, s, F64)],
         sizes=((37, 45), (5, 150)), fp64_strict=True, env={"APPYC_TILES": "0"},
         launches=("_symm_natural_kernel0",), no_launches=("persistent", "_tiles")),
    Case("accumulation_loops", "symm_natural", variant="fp32",
         make=lambda r, s: [1.5, 1.2, normal(r, s), normal(r, (s[0], s[0])), normal(r, s)],
         sizes=((37, 45),), tol=SUM32, launches=("_symm_natural_kernel0",), no_launches=("persistent",)),
    # Its row is dead, but it shares a line with `alpha = 2.0 * alpha`, which must still run:
    # the allocation's line stays (passes/dead_allocations.rs); dropped, alpha would be half.
    Case("accumulation_loops", "symm_shared_line",
         lambda r, s: [1.5, 1.2, normal(r, s, F64), normal(r, (s[0], s[0]), F64), normal(r, s, F64)],
         ((37, 45), (5, 150)), fp64_strict=True,
         launches=("_symm_shared_line_kernel0",), no_launches=("persistent",)),
    Case("accumulation_loops", "lower_product",
         lambda r, s: [normal(r, (s[0], s[0]), F64), normal(r, s, F64), normal(r, s, F64)],
         ((37, 45), (5, 150)), fp64_strict=True,
         launches=("_lower_product_kernel0_tiles",), no_launches=("persistent",)),
    Case("accumulation_loops", "column_triangle",   # sums bounded by the column: no simd lanes
         lambda r, s: [normal(r, (s[1], s[1]), F64), normal(r, (s[1], s[0]), F64), normal(r, (s[0], s[1]), F64)],
         ((37, 45), (5, 150), (70, 21)), fp64_strict=True,
         launches=("_column_triangle_kernel0",), no_launches=("persistent",)),
    Case("accumulation_loops", "syrk_steps",
         lambda r, s: [1.5, normal(r, (s[0], s[0]), F64), normal(r, s, F64)],
         ((37, 45), (5, 150)), fp64_strict=True,
         launches=("_syrk_steps_kernel0_tiles",), no_launches=("persistent",)),
    Case("accumulation_loops", "column_sums",
         lambda r, s: [normal(r, s, F64), normal(r, s[0], F64), normal(r, s[1], F64)],
         ((37, 45), (5, 150)), fp64_strict=True,
         launches=("_column_sums_kernel0",), no_launches=("persistent",)),
    # Reads what it accumulates: left as a loop of regions (one persistent kernel).
    Case("accumulation_loops", "prefix_rows",
         lambda r, s: [normal(r, s, F64)], ((37, 45), (5, 150)), fp64_strict=True,
         launches=("_prefix_rows_persistent0",)),
    # ---------------------------------------------------------------- host_updates
    # `C op= s` before a region that stores all of C runs in the region's store
    # (passes/fold_host_update.rs); where the region stores only some rows, or the statement
    # binds a new array, it stays on the host. Both sides get the caller's C compared too.
    Case("host_updates", "scale_then_update",
         lambda r, s: [1.5, 0.7, normal(r, s, F64), normal(r, s, F64)], SIZES_2D, fp64_strict=True,
         launches=("_scale_then_update_kernel0",)),
    Case("host_updates", "scale_then_update", variant="fp32",
         make=lambda r, s: [1.5, 0.7, normal(r, s), normal(r, s)], sizes=SIZES_2D,
         launches=("_scale_then_update_kernel0",)),
    Case("host_updates", "shift_then_product",
         lambda r, s: [1.5, 0.3, normal(r, s, F64), normal(r, (s[0], 23), F64), normal(r, (23, s[1]), F64)],
         SIZES_2D, fp64_strict=True, launches=("_shift_then_product_kernel0_tiles",)),
    # beta is never subscripted, yet the caller may pass an array NumPy broadcasts against C
    # (C's shape, a row, a column): `_appyc_fold_operand` applies it on the host and hands the
    # kernel the operator's identity. A 0-d or one-element array is a scalar to the kernel.
    Case("host_updates", "scale_then_update", variant="array-beta",
         make=lambda r, s: [1.5, normal(r, s, F64), normal(r, s, F64), normal(r, s, F64)],
         sizes=SIZES_2D, fp64_strict=True, launches=("_scale_then_update_kernel0",)),
    Case("host_updates", "scale_then_update", variant="row-beta-fp32",
         make=lambda r, s: [1.5, normal(r, s[1], F64), normal(r, s), normal(r, s)],
         sizes=SIZES_2D, launches=("_scale_then_update_kernel0",)),
    Case("host_updates", "scale_then_update", variant="0d-beta",
         make=lambda r, s: [1.5, np.array(0.7), normal(r, s, F64), normal(r, s, F64)],
         sizes=SIZES_2D, fp64_strict=True, launches=("_scale_then_update_kernel0",)),
    Case("host_updates", "scale_then_update", variant="1-element-beta",
         make=lambda r, s: [1.5, np.array([[0.7]]), normal(r, s, F64), normal(r, s, F64)],
         sizes=SIZES_2D, fp64_strict=True, launches=("_scale_then_update_kernel0",)),
    Case("host_updates", "shift_then_product", variant="column-beta",
         make=lambda r, s: [1.5, normal(r, (s[0], 1), F64), normal(r, s, F64), normal(r, (s[0], 23), F64),
                            normal(r, (23, s[1]), F64)],
         sizes=SIZES_2D, fp64_strict=True, launches=("_shift_then_product_kernel0_tiles",)),
    Case("host_updates", "shift_then_product", variant="untiled",
         make=lambda r, s: [1.5, 0.3, normal(r, s, F64), normal(r, (s[0], 23), F64), normal(r, (23, s[1]), F64)],
         sizes=SIZES_2D, fp64_strict=True, env={"APPYC_TILES": "0"},
         launches=("_shift_then_product_kernel0",), no_launches=("_tiles",)),
    Case("host_updates", "offset_then_update",
         lambda r, s: [1.5, 0.7, normal(r, s, F64), normal(r, s, F64)], SIZES_2D, fp64_strict=True,
         launches=("_offset_then_update_kernel0",)),
    Case("host_updates", "offset_then_update", variant="array-beta-fp32",
         make=lambda r, s: [1.5, normal(r, s, F64), normal(r, s), normal(r, s)], sizes=SIZES_2D,
         launches=("_offset_then_update_kernel0",)),
    Case("host_updates", "scale_rows_below",
         lambda r, s: [1.5, 0.7, normal(r, s, F64), normal(r, s, F64)], SIZES_2D, fp64_strict=True,
         launches=("_scale_rows_below_kernel0",)),
    Case("host_updates", "rebind_then_update",
         lambda r, s: [1.5, 0.7, normal(r, s, F64), normal(r, s, F64)], SIZES_2D, fp64_strict=True,
         launches=("_rebind_then_update_kernel0",)),
    # ---------------------------------------------------------------- natural_loops
    # Time loops as APPy users write them (bare host statements, swaps, host scalars,
    # convergence loops): each must run as one persistent kernel, never a launch per region.
    Case("natural_loops", "yee_natural",
         lambda r, s: [normal(r, s), normal(r, s), normal(r, s), normal(r, 5), 5], SIZES_2D,
         launches=("_yee_natural_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "reflecting_ends",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 3], SIZES_1D, fp64_strict=True,
         launches=("_reflecting_ends_persistent0",), no_launches=("_kernel",)),
    # A 1-D stencil with a scalar register (`dt = dt * decay`) is temporally blocked too: every
    # program steps `dt` alike; an odd step count leaves a short last group.
    Case("natural_loops", "decaying_wave",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 4, 0.1, 0.9], SIZES_1D,
         fp64_strict=True, launches=("_decaying_wave_persistent0_blocked",), no_launches=("_kernel",)),
    Case("natural_loops", "decaying_wave", variant="odd-steps",
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 5, 0.1, 0.9], sizes=(25, 301),
         fp64_strict=True, launches=("_decaying_wave_persistent0_blocked",), no_launches=("_kernel",)),
    Case("natural_loops", "decaying_wave", variant="unblocked",
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 4, 0.1, 0.9], sizes=SIZES_1D,
         fp64_strict=True, env={"APPYC_TEMPORAL": "0"}, launches=("_decaying_wave_persistent0",),
         no_launches=("_blocked", "_kernel")),
    Case("natural_loops", "decaying_wave", variant="fp32",
         make=lambda r, n: [normal(r, n), normal(r, n), n, 3, 0.1, 0.9], sizes=(37,),
         launches=("_decaying_wave_persistent0_blocked",), no_launches=("_kernel",)),
    Case("natural_loops", "wave_with_clock",   # a step reads the loop variable: not blocked
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 5, 0.1], SIZES_1D,
         fp64_strict=True, launches=("_wave_with_clock_persistent0",), no_launches=("_blocked", "_kernel")),
    Case("natural_loops", "swap_smooth",   # an odd and an even number of swaps
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 3], SIZES_1D, fp64_strict=True,
         launches=("_swap_smooth_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "swap_smooth", variant="even",
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 4], sizes=(37,),
         fp64_strict=True, launches=("_swap_smooth_persistent0",), no_launches=("_kernel",)),
    # Convergence loops: the test holds at different steps per size (n = 37 runs into
    # max_iter, n = 1000 stops at its tolerance); the changes are reduced on the device.
    Case("natural_loops", "relax_to_tolerance",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 0.1, 12], SIZES_1D,
         fp64_strict=True, launches=("_relax_to_tolerance_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "relax_to_tolerance", variant="fp32-loose",
         make=lambda r, n: [normal(r, n), normal(r, n), n, 0.2, 12], sizes=(1000,),
         launches=("_relax_to_tolerance_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "smooth_then_measure",   # stops on tol at different steps by size
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), normal(r, n, F64), n, 0.1, 12], SIZES_1D,
         fp64_strict=True, launches=("_smooth_then_measure_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "relax_open_slices",   # `B[1:-1] - A[1:-1]`: checked at the launch
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), 0.1, 12], SIZES_1D,
         fp64_strict=True, launches=("_relax_open_slices_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "relax_until_small",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 0.1, 12], SIZES_1D,
         fp64_strict=True, launches=("_relax_until_small_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "relax_until_small", variant="early",
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 0.3, 12], sizes=(1000,),
         fp64_strict=True, launches=("_relax_until_small_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "gemver_loops",   # the update fused into the column reduction
         lambda r, n: [1.5, 1.2, normal(r, (n, n), F64)] + [normal(r, n, F64) for _ in range(8)],
         (19, 150), fp64_strict=True, launches=("_gemver_loops_kernel1", "_gemver_loops_kernel2"),
         no_launches=("_gemver_loops_kernel0",)),
    Case("natural_loops", "smooth_2d_swap",   # odd steps: the result is in the caller's B
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), 3], SIZES_2D, fp64_strict=True,
         launches=("_smooth_2d_swap_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "counted_steps",
         lambda r, n: [normal(r, n, F64), n, 3], SIZES_1D, fp64_strict=True,
         launches=("_counted_steps_persistent0",), no_launches=("_kernel",)),
    # What the loop leaves after it (Python's values and types), each loop one persistent
    # launch: the loop variable (bound before or not, a strided range, a loop that breaks),
    # counters (a float one stays a float), a flag, `a or b` / `a and b` on numbers.
    Case("natural_loops", "last_step",
         lambda r, n: [normal(r, n, F64), n, 3], SIZES_1D, fp64_strict=True,
         launches=("_last_step_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "last_step", variant="empty",   # no iteration: t keeps its -1
         make=lambda r, n: [normal(r, n, F64), n, 0], sizes=(37,), mvls=(128,),
         expect_launch=False),
    Case("natural_loops", "strided_last_step",   # range(1, 11, 3): t = 10
         lambda r, n: [normal(r, n, F64), n, 11], SIZES_1D, fp64_strict=True,
         launches=("_strided_last_step_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "strided_last_step", variant="one",   # range(1, 3, 3): t = 1
         make=lambda r, n: [normal(r, n, F64), n, 3], sizes=(37,), fp64_strict=True,
         launches=("_strided_last_step_persistent0",), no_launches=("_kernel",)),
    # Breaks at step 19 (n = 37) and 21 (n = 1000); the other runs to the range's end.
    Case("natural_loops", "steps_until_small",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 0.02, 40], SIZES_1D,
         fp64_strict=True, launches=("_steps_until_small_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "steps_until_small", variant="to-the-end",
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 1e-9, 5], sizes=(37,),
         fp64_strict=True, launches=("_steps_until_small_persistent0",), no_launches=("_kernel",)),
    # n = 37 ends by the while test (12.0, 24, False), n = 1000 breaks at 6 (6.0, 12, True).
    Case("natural_loops", "counters_until_small",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 0.1, 12], SIZES_1D,
         fp64_strict=True, launches=("_counters_until_small_persistent0",),
         no_launches=("_kernel",)),
    Case("natural_loops", "or_defaults",
         lambda r, n: [normal(r, n, F64), n, 3, 1.5], SIZES_1D, fp64_strict=True,
         launches=("_or_defaults_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "or_defaults", variant="zero-scale",   # s = 0.5; one step: k = 0, m = -1
         make=lambda r, n: [normal(r, n, F64), n, 1, 0.0], sizes=(37,), fp64_strict=True,
         launches=("_or_defaults_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "counted_from",   # an int start: an int back
         lambda r, n: [normal(r, n, F64), n, 3, 2], SIZES_1D, fp64_strict=True,
         launches=("_counted_from_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "counted_from", variant="float-start",   # 2.0: a float back
         make=lambda r, n: [normal(r, n, F64), n, 3, 2.0], sizes=(37,), fp64_strict=True,
         launches=("_counted_from_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "offset_counter",   # c = 0.5 + T: a float register
         lambda r, n: [normal(r, n, F64), n, 3], SIZES_1D, fp64_strict=True,
         launches=("_offset_counter_persistent0",), no_launches=("_kernel",)),
    # A break that more statements follow (a swap, a counter, a step size, a region): they run
    # only in iterations that go on. Each breaks mid-run, in its first iteration, or never.
    # swap_until_small breaks at it = 9 (n = 37) and 10 (n = 1000), damped_until_small at 15
    # and 18; until_done ends by its test at 4 (n = 37) and by the cap's break at 12.
    Case("natural_loops", "swap_until_small",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 0.05, 20], SIZES_1D,
         fp64_strict=True, launches=("_swap_until_small_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "swap_until_small", variant="first",
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 10.0, 20], sizes=(37,),
         fp64_strict=True, launches=("_swap_until_small_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "swap_until_small", variant="never",
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, -1.0, 5], sizes=(37,),
         fp64_strict=True, launches=("_swap_until_small_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "damped_until_small",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 0.1, 30, 0.3, 0.9], SIZES_1D,
         fp64_strict=True, launches=("_damped_until_small_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "damped_until_small", variant="first",
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 100.0, 30, 0.3, 0.9],
         sizes=(37,), fp64_strict=True, launches=("_damped_until_small_persistent0",),
         no_launches=("_kernel",)),
    Case("natural_loops", "damped_until_small", variant="never",
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, -1.0, 4, 0.3, 0.9],
         sizes=(37,), fp64_strict=True, launches=("_damped_until_small_persistent0",),
         no_launches=("_kernel",)),
    Case("natural_loops", "within_budget",   # breaks at it = 3 with spent = 6
         lambda r, n: [normal(r, n, F64), n, 4, 6], SIZES_1D, fp64_strict=True,
         launches=("_within_budget_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "within_budget", variant="first",   # it = 0, spent = 0, A unchanged
         make=lambda r, n: [normal(r, n, F64), n, 0, 6], sizes=(37,), fp64_strict=True,
         launches=("_within_budget_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "within_budget", variant="never",
         make=lambda r, n: [normal(r, n, F64), n, 100, 5], sizes=(37,), fp64_strict=True,
         launches=("_within_budget_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "until_done",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 0.3, 12], SIZES_1D,
         fp64_strict=True, launches=("_until_done_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "until_done", variant="first",   # cap 0: (0, False), nothing swapped
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 0.1, 0], sizes=(37,),
         fp64_strict=True, launches=("_until_done_persistent0",), no_launches=("_kernel",)),
    # Names first assigned after the break: the host's values (False, -1) after a break at once.
    Case("natural_loops", "marks_until_small",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 0.05, 20], SIZES_1D,
         fp64_strict=True, launches=("_marks_until_small_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "marks_until_small", variant="first",
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 10.0, 20], sizes=(37,),
         fp64_strict=True, launches=("_marks_until_small_persistent0",), no_launches=("_kernel",)),
    # `if`s of host scalars as steps of the persistent kernel. relax_converged's plain Jacobi
    # step never damps a random start's alternating mode: it starts from a smooth wave (the
    # same 24-element period at every size), breaks at it = 15 (n = 37) and 24 (n = 1000), in
    # its first iteration, or runs to max_iter.
    Case("natural_loops", "relax_converged",
         lambda r, n: smooth_pair(r, n) + [0.02, 40], SIZES_1D,
         fp64_strict=True, launches=("_relax_converged_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "relax_converged", variant="first",
         make=lambda r, n: smooth_pair(r, n) + [10.0, 40], sizes=(37,),
         fp64_strict=True, launches=("_relax_converged_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "relax_converged", variant="never",
         make=lambda r, n: smooth_pair(r, n) + [-1.0, 5], sizes=(37,),
         fp64_strict=True, launches=("_relax_converged_persistent0",), no_launches=("_kernel",)),
    # Halves every 3rd step, grows by 5 % on the others (it reads the loop variable: not
    # blocked); the factor, unbound before the loop, comes back (0.5: step 6 halves).
    Case("natural_loops", "rescale_every",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 7, 0.1, 3], SIZES_1D,
         fp64_strict=True, launches=("_rescale_every_persistent0",), no_launches=("_blocked", "_kernel")),
    # gain 1.5, 1.25, 1.875, 1.625, lo (past hi = 1.7), ...: every path of the nested ifs.
    Case("natural_loops", "nested_gain",
         lambda r, n: [normal(r, n, F64), n, 9, 0.75, 1.7], SIZES_1D, fp64_strict=True,
         launches=("_nested_gain_persistent0",), no_launches=("_kernel",)),
    # The elif's break mid-run (at it = 2 after a quiet step, both sizes), at once (no change
    # exceeds `start`, every one is below tol: reason 1, it 0), never (tol < 0: quiet counts).
    Case("natural_loops", "watch_change",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 0.3, 0.0, 20], SIZES_1D,
         fp64_strict=True, launches=("_watch_change_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "watch_change", variant="first",
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 100.0, 100.0, 20], sizes=(37,),
         fp64_strict=True, launches=("_watch_change_persistent0",), no_launches=("_kernel",)),
    Case("natural_loops", "watch_change", variant="never",
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, -1.0, 0.0, 6], sizes=(37,),
         fp64_strict=True, launches=("_watch_change_persistent0",), no_launches=("_kernel",)),
    # dt 0.2 * 0.8^k until it is at most 0.1 (after 4 steps), then constant: still blocked.
    Case("natural_loops", "floored_wave",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 7, 0.2, 0.8, 0.1], SIZES_1D,
         fp64_strict=True, launches=("_floored_wave_persistent0_blocked",), no_launches=("_kernel",)),
    # `step = 3` before the loop, read in it: an int register (it was a float, and so `hits`).
    Case("natural_loops", "int_counter",
         lambda r, n: [normal(r, n, F64), 5], SIZES_1D, fp64_strict=True,
         launches=("_int_counter_persistent0",), no_launches=("_kernel",)),
    # ---------------------------------------------------------------- square_slices
    # One slice naming two dimensions must not collapse them into the diagonal.
    Case("square_slices", "square_scale", lambda r, n: [normal(r, (n, n)), normal(r, (n, n)), n],
         (19, 37)),
    Case("square_slices", "square_grid", lambda r, n: [normal(r, (n, n)), normal(r, (n, n)), n],
         (19, 37)),
    Case("square_slices", "square_matvec",
         lambda r, n: [normal(r, (n, n)), normal(r, n), normal(r, n), n], (19, 37), tol=SUM32),
    # ---------------------------------------------------------------- gesummv
    Case("gesummv", "gesummv",
         lambda r, s: [1.5, 1.2, normal(r, s, F64), normal(r, s, F64), normal(r, s[1], F64),
                       normal(r, s[0], F64), normal(r, s[0], F64), s[0], s[1]], SIZES_2D,
         fp64_strict=True),
    Case("gesummv", "gesummv_one_statement",
         lambda r, s: [1.5, 1.2, normal(r, s), normal(r, s), normal(r, s[1]), normal(r, s[0]),
                       s[0], s[1]], SIZES_2D, tol=SUM32),
    # ---------------------------------------------------------------- softmax_tensor
    Case("softmax_tensor", "softmax",
         lambda r, s: [normal(r, s), normal(r, s), s[0], s[1]], SIZES_2D, tol=RED32),
    Case("softmax_tensor", "softmax_rows",
         lambda r, s: [normal(r, s), normal(r, s), s[0], s[1]], SIZES_2D, tol=RED32),
    Case("softmax_tensor", "softmax_short_rows",
         lambda r, s: [normal(r, s), normal(r, s), s[0], s[1]], SIZES_2D, tol=RED32),
    # ---------------------------------------------------------------- heat_3d
    Case("heat_3d", "heat_3d",
         lambda r, s: [normal(r, s), normal(r, s), s[0], s[1], s[2]], ((5, 7, 37), (4, 3, 131))),
    Case("heat_3d", "heat_3d_tiles",
         lambda r, s: [normal(r, s), normal(r, s), s[0], s[1], s[2]], ((5, 7, 37), (4, 11, 131))),
    Case("heat_3d", "laplace_open_bounds",
         lambda r, s: [normal(r, s), normal(r, s)], SIZES_2D),
    # ---------------------------------------------------------------- syrk
    # Row slices in APPy's tensor style: computed as tl.dot tiles (one tile at these sizes,
    # and across tiles at 70), and by the general kernel with APPYC_TILES=0.
    Case("syrk", "syrk",
         lambda r, s: [1.5, 1.2, normal(r, (s[0], s[0])), normal(r, s), s[0], s[1]],
         ((19, 7), (37, 3), (70, 21)), tol=SUM32, launches=("_tiles",)),
    Case("syrk", "syrk",
         lambda r, s: [1.5, 1.2, normal(r, (s[0], s[0]), F64), normal(r, s, F64), s[0], s[1]],
         ((70, 21),), mvls=(16,), variant="f64", launches=("_tiles",)),
    Case("syrk", "syrk",
         lambda r, s: [1.5, 1.2, normal(r, (s[0], s[0])), normal(r, s), s[0], s[1]],
         ((19, 7), (37, 3)), tol=SUM32, variant="untiled", env={"APPYC_TILES": "0"},
         no_launches=("_tiles",)),
    # ---------------------------------------------------------------- matmul_loops
    # Each nest runs as tl.dot tiles (fp64 and fp32) and, with APPYC_TILES=0 or integer arrays,
    # as the general kernel; sizes straddle the 64-wide tiles and the 16-deep k-blocks.
    *matmul_cases(),
    # ---------------------------------------------------------------- inplace_shift
    Case("inplace_shift", "smooth_rows",
         lambda r, s: [normal(r, s), s[0], s[1]], SIZES_2D),
    Case("inplace_shift", "smooth_vector", lambda r, n: [normal(r, n), n], SIZES_1D),
    Case("inplace_shift", "scale_in_place",
         lambda r, s: [normal(r, s), s[0], s[1], 0.75], SIZES_2D),
    Case("inplace_shift", "subtract_pivot",
         lambda r, s: [normal(r, s), s[0], s[1], s[1] // 2 + 1], SIZES_2D),
    Case("inplace_shift", "relax_rows",
         lambda r, s: [np.abs(normal(r, (s[0], s[0]))), s[0]], SIZES_2D),
    # ---------------------------------------------------------------- outer_product
    Case("outer_product", "outer",
         lambda r, s: [normal(r, s[0]), normal(r, s[1]), normal(r, s), s[0], s[1]], SIZES_2D),
    Case("outer_product", "rank1_update",
         lambda r, s: [0.5, normal(r, s[0]), normal(r, s[1]), normal(r, s), s[0], s[1]],
         SIZES_2D),
    Case("outer_product", "batched_outer",
         lambda r, s: [normal(r, s[:2]), normal(r, (s[0], s[2])), normal(r, s), s[0], s[1], s[2]],
         ((3, 19, 29), (2, 9, 150))),
    # ---------------------------------------------------------------- column_reductions
    # Row tiles of 32 rows: sizes straddle one and several strips, none a multiple of 16.
    *column_reduction_cases(),
    # ---------------------------------------------------------------- reductions_axes
    Case("reductions_axes", "row_sums",
         lambda r, s: [normal(r, s), normal(r, s[0]), s[0], s[1]], SIZES_2D, tol=SUM32),
    Case("reductions_axes", "col_max",
         lambda r, s: [normal(r, s) - 3.0, normal(r, s[1]), s[0], s[1]], SIZES_2D),
    Case("reductions_axes", "total",
         lambda r, s: [normal(r, s), normal(r, 1), s[0], s[1]], ((19, 29), (3, 150)),
         tol={"float32": (1e-4, 1e-3)}),
    Case("reductions_axes", "row_dots",
         lambda r, s: [normal(r, s), normal(r, s), normal(r, s[0]), s[0], s[1]], SIZES_2D,
         tol=SUM32),
    # ---------------------------------------------------------------- host_tensor
    Case("host_tensor", "scale_product",
         lambda r, s: [normal(r, (s[0], 23)), normal(r, (23, s[1])), normal(r, s[1]), s[0], s[1]],
         SIZES_2D, tol={"float32": (1e-4, 1e-4)}),
    Case("reductions_axes", "leaky_rows",
         lambda r, s: [normal(r, s), normal(r, s), s[0], s[1], 0.1], SIZES_2D),
    Case("reductions_axes", "col_means",
         lambda r, s: [normal(r, s), normal(r, s[1]), s[0]], SIZES_2D, tol=SUM32),
    Case("reductions_axes", "add_full", lambda r, s: [normal(r, s), normal(r, s)], SIZES_2D),
    Case("reductions_axes", "row_min",
         lambda r, s: [normal(r, s) + 3.0, normal(r, s[0]), s[0], s[1]], SIZES_2D),
    # ---------------------------------------------------------------- shared_scalars
    # Scalar results: the harness compares values, and that a Python number came back.
    # Scalars a region computes and the host reads after it (passes/live_out.rs).
    Case("region_results", "first_plus_one", lambda r, n: [normal(r, n, F64)], (5, 7),
         fp64_strict=True),
    Case("region_results", "first_plus_one", lambda r, n: [normal(r, n)], (5,), variant="fp32"),
    Case("region_results", "running_product", lambda r, n: [normal(r, n, F64), n], SIZES_1D,
         fp64_strict=True),
    Case("region_results", "sum_into_name", lambda r, n: [normal(r, n), n], SIZES_1D, tol=SUM32),
    Case("region_results", "sum_into_name", lambda r, n: [normal(r, n, F64), n], SIZES_1D,
         variant="fp64"),
    # Convergence loops (B starts as A) end by their test, at steps that differ by size (about
    # 8 and 10 sweeps); one persistent kernel each.
    Case("region_results", "relax_tensor_test",
         lambda r, n: relax_from(normal(r, n, F64), n, 0.05), (9, 12),
         fp64_strict=True, launches=("_persistent0",), no_launches=("_kernel",)),
    Case("region_results", "relax_bare_test",
         lambda r, n: relax_from(normal(r, n, F64), n, 0.05), (9, 12),
         fp64_strict=True, launches=("_persistent0",), no_launches=("_kernel",)),
    Case("region_results", "damped_energy",
         lambda r, s: [normal(r, s, F64), normal(r, s, F64), 5, 0.1], ((7, 37), (19, 130)),
         fp64_strict=True, launches=("_persistent0",), no_launches=("_kernel",)),
    Case("region_results", "relax_tensor_test", variant="capped",   # ends by max_iter
         make=lambda r, n: [normal(r, n, F64), normal(r, n, F64), n, 1e-12, 7], sizes=(37,),
         fp64_strict=True),
    Case("region_results", "largest_count",
         lambda r, n: [ints(r, -2**30, 2**30, n), n], SIZES_1D),
    Case("region_results", "last_element_doubled", lambda r, n: [normal(r, n, F64), n],
         SIZES_1D_SMALL, fp64_strict=True),
    # ---------------------------------------------------------------- joined_regions
    # A region after the loop it reads back runs inside that loop's kernel: one launch
    # (`_kernel1` would be the reduction's own), one phase a sweep of the persistent loop.
    Case("joined_regions", "filled_dot",
         lambda r, n: [normal(r, n, F64), np.zeros(n, F64), n], SIZES_1D,
         no_launches=("_kernel1",)),
    Case("joined_regions", "filled_dot", lambda r, n: [normal(r, n), np.zeros(n, F32), n],
         SIZES_1D, tol=SUM32, variant="fp32", no_launches=("_kernel1",)),
    Case("joined_regions", "relax_2d_tol",
         lambda r, s: (lambda A: [A, A.copy(), 0.05, 200])(normal(r, s, F64)),
         ((9, 13), (14, 150)), fp64_strict=True, launches=("_persistent0",),
         no_launches=("_kernel",)),
    Case("joined_regions", "relax_2d_tol", variant="capped",  # ends by max_iter
         make=lambda r, s: [normal(r, s, F64), normal(r, s, F64), 1e-12, 5], sizes=((11, 37),),
         fp64_strict=True, launches=("_persistent0",)),
    Case("joined_regions", "relax_2d_open_slices",   # `B[1:-1, 1:-1] - A[1:-1, 1:-1]`, joined
         lambda r, s: (lambda A: [A, A.copy(), 0.05, 200])(normal(r, s, F64)),
         ((9, 13), (14, 150)), fp64_strict=True, launches=("_persistent0",),
         no_launches=("_kernel",)),
    Case("joined_regions", "shifted_max", lambda r, n: [normal(r, n, F64), np.zeros(n, F64), n],
         SIZES_1D, fp64_strict=True, no_launches=("_kernel1",)),
    Case("joined_regions", "neighbour_sum",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), n], SIZES_1D,
         launches=("_kernel0", "_kernel1")),
    Case("joined_regions", "residual",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), normal(r, n, F64), n], SIZES_1D,
         fp64_strict=True, no_launches=("_kernel1",)),
    Case("joined_regions", "copied_back", lambda r, n: [normal(r, n, F64), normal(r, n, F64), n],
         SIZES_1D, fp64_strict=True, launches=("_kernel0", "_kernel1")),
    Case("joined_regions", "stored_then_read",
         lambda r, n: [ints(r, -1000, 1000, n), np.zeros(n, I32), np.zeros(n, F64), n], SIZES_1D,
         fp64_strict=True),
    Case("joined_regions", "decayed_energy",
         lambda r, n: [normal(r, n, F64), normal(r, n, F64), 6, n], SIZES_1D,
         launches=("_persistent0",), no_launches=("_kernel",)),
    Case("shared_scalars", "total", lambda r, n: [normal(r, n)], SIZES_1D, tol=SUM32),
    Case("shared_scalars", "total", lambda r, n: [normal(r, n, F64)], SIZES_1D,
         variant="fp64"),
    Case("shared_scalars", "total_from", lambda r, n: [normal(r, n), 2.5, n], SIZES_1D,
         tol=SUM32),
    Case("shared_scalars", "total_from", lambda r, n: [normal(r, n), 2.5, 0], (5,),
         expect_launch=False, variant="empty"),
    Case("shared_scalars", "largest", lambda r, n: [normal(r, n) - 5.0], SIZES_1D),
    Case("shared_scalars", "smallest", lambda r, n: [normal(r, n, F64) + 5.0], SIZES_1D),
    Case("shared_scalars", "masked_total",
         lambda r, n: [normal(r, n), ints(r, 0, 2, n)], SIZES_1D, tol=SUM32),
    Case("shared_scalars", "count_positive", lambda r, n: [normal(r, n)], SIZES_1D),
    Case("shared_scalars", "midpoint_integral", lambda r, n: [n, 1.0 / n], SIZES_1D,
         tol={"float64": (1e-12, 1e-12)}),
    Case("shared_scalars", "flag_index", lambda r, n: [normal(r, n), n // 3], SIZES_1D),
    Case("shared_scalars", "frobenius_squared", lambda r, s: [normal(r, s)], SIZES_2D,
         tol=SUM32),
    # ---------------------------------------------------------------- appy_decorators
    # Written for APPy (`import appy`, `@appy.jit`); the output runs without appy.
    Case("appy_decorators", "scale", lambda r, n: [normal(r, n), np.zeros(n, F32), 1.5],
         SIZES_1D),
    Case("appy_decorators", "strips", lambda r, n: [normal(r, n, F64), np.zeros(n, F64), n],
         SIZES_1D),
    Case("appy_decorators", "total", lambda r, n: [normal(r, n, F64)], SIZES_1D),
    Case("appy_decorators", "twice", lambda r, n: [normal(r, n), np.zeros(n, F32)], SIZES_1D,
         expect_launch=False),
    # ---------------------------------------------------------------- reduction_clause
    # OpenMP's reduction(op:x): the values after the loop, in NumPy's dtype, fp32 and fp64.
    Case("reduction_clause", "moments", lambda r, n: [normal(r, n), np.zeros(4, F32)], SIZES_1D,
         tol=SUM32),
    Case("reduction_clause", "moments", lambda r, n: [normal(r, n, F64), np.zeros(4, F64)],
         SIZES_1D, variant="fp64"),
    Case("reduction_clause", "spread", lambda r, n: [normal(r, n)], SIZES_1D),
    Case("reduction_clause", "spread", lambda r, n: [normal(r, n, F64) + 3.0], SIZES_1D,
         variant="fp64"),
    Case("reduction_clause", "signed_total", lambda r, n: [normal(r, n), ints(r, 0, 2, n)],
         SIZES_1D_SMALL, tol=SUM32),
    Case("reduction_clause", "signed_total",
         lambda r, n: [normal(r, n, F64), ints(r, 0, 2, n)], SIZES_1D_SMALL, variant="fp64"),
    Case("reduction_clause", "grid_total", lambda r, s: [normal(r, s)], SIZES_2D, tol=SUM32),
    Case("reduction_clause", "grid_total", lambda r, s: [normal(r, s, F64)], SIZES_2D,
         variant="fp64"),
    Case("reduction_clause", "row_strip_peak",
         lambda r, s: [ints(r, -2**30, 2**30, s), s[0], s[1]], SIZES_2D),
    Case("reduction_clause", "total_from", lambda r, n: [normal(r, n, F64), 2.5, n], SIZES_1D),
    Case("reduction_clause", "total_from", lambda r, n: [normal(r, n), 2.5, 0], (5, 7),
         expect_launch=False, variant="empty"),
    # ---------------------------------------------------------------- tuple_assign
    Case("tuple_assign", "csr_rows",
         lambda r, s: (lambda p, i, d: [d, p, i, normal(r, s[1]), s[0], np.zeros(s[0], F32)])(
             *csr(r, s[0], s[1], I32)), SIZES_2D, tol=RED32),
    Case("tuple_assign", "ordered_pairs",
         lambda r, n: [normal(r, n), normal(r, n), n], SIZES_1D),
    Case("tuple_assign", "binned_mean",
         lambda r, s: [normal(r, s[1], F64), r.uniform(0.0, 4.0, s[1]), s[0]], SIZES_2D),
    Case("tuple_assign", "scale_by_norm",
         lambda r, n: [normal(r, n), np.zeros(n, F32)], SIZES_1D),
]


def default_tol(dtype: np.dtype):
    """(rtol, atol) for comparing arrays of `dtype`; None means exact."""
    if dtype == np.float32:
        return 1e-4, 1e-5
    if dtype == np.float64:
        return 1e-10, 1e-12
    return None


FP64_STRICT_TOL = (1e-12, 1e-12)
