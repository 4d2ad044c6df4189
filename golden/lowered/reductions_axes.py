# appyc 0.1.0 --emit lowered: samples/reductions_axes.py after the high-level passes (assembly APPy).
"""Reductions over each axis, the whole array, and by method.

Exercises: `np.sum(..., axis=1)`, `np.max(..., axis=0)`, a full reduction, row-wise vector dot products
`A[i, :N] @ B[i, :N]`, `.min()` on a row inside a parallel loop, and `reduce(op)` properties checked against
the statement.
"""
import numpy as np


def row_sums(A, r, M, N):
    # _row_sums_kernel0
    #pragma parallel for
    for _p0 in range(0, M, 1):
        _acc = 0
        for _i_base in range(0, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            _acc = _acc + sum(A[_p0, _i])
        r[_p0] = _acc


def col_max(A, c, M, N):
    # _col_max_kernel0
    #pragma parallel for
    for _p0 in range(0, N, 1):
        _acc = A[0, _p0]
        for _i_base in range(0, M, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, M)
            _acc = max(_acc, max(A[_i, _p0]))
        c[_p0] = _acc


def total(A, s, M, N):
    # _total_kernel0
    #pragma sequential for
    _acc = 0
    for _i in range(0, M, 1):
        for _i1_base in range(0, N, appy.MVL):
            _i1 = appy.vidx(_i1_base, appy.MVL, N)
            _acc = _acc + sum(A[_i, _i1])
    s[0] = _acc


def row_dots(A, B, out, M, N):
    # _row_dots_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        _acc = 0
        for _i_base in range(0, N, 64):
            _i = appy.vidx(_i_base, 64, N)
            _acc = _acc + sum(A[i, _i] * B[i, _i])
        out[i] = _acc


def row_min(A, r, M, N):
    # _row_min_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        _acc = A[i, 0]
        for _i_base in range(0, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            _acc = min(_acc, min(A[i, _i]))
        r[i] = _acc


def leaky_rows(A, B, M, N, slope):
    # _leaky_rows_kernel0
    #pragma parallel for
    for _p0 in range(0, M, 1):
        for _i_base in range(0, N, 64):
            _i = appy.vidx(_i_base, 64, N)
            B[_p0, _i] = np.where(A[_p0, _i] > 0.0, A[_p0, _i], slope * A[_p0, _i])


def col_means(A, m, M):
    # Full slices `:` name dimensions too; the column dimension of A is m's.
    # _col_means_kernel0
    #pragma parallel for
    for _p0 in range(0, m.shape[0], 1):
        _acc = 0
        for _i_base in range(0, M, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, M)
            _acc = _acc + sum(A[_i, _p0])
        _r = _acc
        m[_p0] = _r / M


def add_full(A, B):
    # _add_full_kernel0
    #pragma parallel for simd
    for _p0 in range(0, B.shape[0], 1):
        _p0 = appy.vidx(_p0, appy.ROW_BLOCK, B.shape[0])
        #pragma parallel for simd
        for _i in range(0, B.shape[1], 1):
            _i = appy.vidx(_i, appy.MVL // appy.ROW_BLOCK, B.shape[1])
            B[_p0, _i] = A[_p0, _i] + 1.0
