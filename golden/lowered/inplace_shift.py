# appyc 0.1.0 --emit lowered: samples/inplace_shift.py after the high-level passes (assembly APPy).
"""Self-dependent in-place updates (paper Figure 2): the target is read at a shifted slice.

Exercises: temporary arrays (Alg. 5) inside a parallel loop and at function level, and the
proof that skips them when every read of the target is at the written element.
"""
import numpy as np


def smooth_rows(A, M, N):
    # _smooth_rows_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        for _i_base in range(1, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            _tmp[i, _i] = 0.5 * (A[i, _i - 1] + A[i, _i])
        appy.syncthreads()
        for _i1_base in range(1, N, appy.MVL):
            _i1 = appy.vidx(_i1_base, appy.MVL, N)
            A[i, _i1] = _tmp[i, _i1]


def smooth_vector(x, N):
    # _smooth_vector_kernel0
    #pragma sequential for
    for _i_base in range(1, N, appy.MVL):
        _i = appy.vidx(_i_base, appy.MVL, N)
        _tmp[_i] = 0.5 * (x[_i - 1] + x[_i])
    appy.syncthreads()
    for _i1_base in range(1, N, appy.MVL):
        _i1 = appy.vidx(_i1_base, appy.MVL, N)
        x[_i1] = _tmp[_i1]


def scale_in_place(A, M, N, s):
    # _scale_in_place_kernel0
    #pragma parallel for
    for _p0 in range(0, M, 1):
        for _i_base in range(0, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            A[_p0, _i] = A[_p0, _i] * s + 1.0
