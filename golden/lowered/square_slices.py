# appyc 0.1.0 --emit lowered: samples/square_slices.py after the high-level passes (assembly APPy).
"""Square arrays sliced with one bound in every dimension (`A[:N, :N]`).

Exercises: two dimensions of one statement named by the same slice. Each is a dimension of its
own: a `parallel` pragma on `:N` makes the first of them the grid and the second a vector loop
(square_scale), two `parallel` items make both grid dimensions (square_grid), and a reduced
`:N` is the contracted dimension, not the diagonal (square_matvec).
"""
import numpy as np


def square_scale(A, B, N):
    # _square_scale_kernel0
    #pragma parallel for simd
    for _p0 in range(0, N, 1):
        _p0 = appy.vidx(_p0, appy.ROW_BLOCK, N)
        #pragma parallel for simd
        for _i in range(0, N, 1):
            _i = appy.vidx(_i, appy.MVL // appy.ROW_BLOCK, N)
            B[_p0, _i] = 2.0 * A[_p0, _i] + 1.0


def square_grid(A, B, N):
    # _square_grid_kernel0
    #pragma parallel for simd
    for _p0 in range(0, N, 1):
        _p0 = appy.vidx(_p0, appy.ROW_BLOCK, N)
        #pragma parallel for simd
        for _p1 in range(0, N, 1):
            _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, N)
            B[_p0, _p1] = A[_p0, _p1] - 0.5


def square_matvec(A, x, y, N):
    # _square_matvec_kernel0
    #pragma parallel for
    for _p0 in range(0, N, 1):
        _acc = 0
        for _i_base in range(0, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            _acc = _acc + sum(A[_p0, _i] * x[_i])
        y[_p0] = _acc
