# appyc 0.1.0 --emit lowered: samples/reductions_axes.py after the high-level passes (assembly APPy).
"""Reductions over each axis, the whole array, and by method.

Exercises: `np.sum(..., axis=1)`, `np.max(..., axis=0)`, a full reduction, a vector dot product
`x @ y`, `.min()` on a row inside a parallel loop, and `reduce(op)` properties checked against
the statement.
"""
import numpy as np


def row_sums(A, r, M, N):
    # _row_sums_kernel0
    #pragma parallel for
    for _p0 in range(0, M, 1):
        _acc0 = 0
        for _i0_base in range(0, N, appy.MVL):
            _i0 = appy.vidx(_i0_base, appy.MVL, N)
            _acc0 = _acc0 + sum(A[_p0, _i0])
        r[_p0] = _acc0


def col_max(A, c, M, N):
    # _col_max_kernel0
    #pragma parallel for
    for _p0 in range(0, N, 1):
        _acc0 = A[0, _p0]
        for _i0_base in range(0, M, appy.MVL):
            _i0 = appy.vidx(_i0_base, appy.MVL, M)
            _acc0 = max(_acc0, max(A[_i0, _p0]))
        c[_p0] = _acc0


def total(A, s, M, N):
    # _total_kernel0
    #pragma sequential for
    _acc0 = 0
    for _i0 in range(0, M, 1):
        for _i1_base in range(0, N, appy.MVL):
            _i1 = appy.vidx(_i1_base, appy.MVL, N)
            _acc0 = _acc0 + sum(A[_i0, _i1])
    s[0] = _acc0


def dot(x, y, out, N):
    # _dot_kernel0
    #pragma sequential for
    _acc0 = 0
    for _i0_base in range(0, N, 64):
        _i0 = appy.vidx(_i0_base, 64, N)
        _acc0 = _acc0 + sum(x[_i0] * y[_i0])
    out[0] = _acc0


def row_min(A, r, M, N):
    # _row_min_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        _acc0 = A[i, 0]
        for _i0_base in range(0, N, appy.MVL):
            _i0 = appy.vidx(_i0_base, appy.MVL, N)
            _acc0 = min(_acc0, min(A[i, _i0]))
        r[i] = _acc0


def leaky_rows(A, B, M, N, slope):
    # _leaky_rows_kernel0
    #pragma parallel for
    for _p0 in range(0, M, 1):
        for _i0_base in range(0, N, 64):
            _i0 = appy.vidx(_i0_base, 64, N)
            B[_p0, _i0] = np.where(A[_p0, _i0] > 0.0, A[_p0, _i0], slope * A[_p0, _i0])
