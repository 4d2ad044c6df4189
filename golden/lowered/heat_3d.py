# appyc 0.1.0 --emit lowered: samples/heat_3d.py after the high-level passes (assembly APPy).
"""A 3-D heat stencil (NPBench heat_3d), one step in each direction.

Exercises: a 3-D tensor statement with three dimension pragmas (two `parallel` grid
dimensions and a `simd` one), shifted slices in every dimension, and open bounds (`1:-1`).
"""
import numpy as np


def heat_3d(A, B, L, M, N):
    # _heat_3d_kernel0
    #pragma parallel for
    for _p0 in range(1, L - 1, 1):
        #pragma parallel for simd
        for _p1 in range(1, M - 1, 1):
            _p1 = appy.vidx(_p1, appy.ROW_BLOCK, M - 1)
            #pragma parallel for simd
            for _i in range(1, N - 1, 1):
                _i = appy.vidx(_i, appy.MVL // appy.ROW_BLOCK, N - 1)
                B[_p0, _p1, _i] = 0.125 * (A[_p0 + 1, _p1, _i] - 2.0 * A[_p0, _p1, _i] + A[_p0 - 1, _p1, _i]) + 0.125 * (A[_p0, _p1 + 1, _i] - 2.0 * A[_p0, _p1, _i] + A[_p0, _p1 - 1, _i]) + 0.125 * (A[_p0, _p1, _i + 1] - 2.0 * A[_p0, _p1, _i] + A[_p0, _p1, _i - 1]) + A[_p0, _p1, _i]


def laplace_open_bounds(A, B):
    # _laplace_open_bounds_kernel0
    #pragma parallel for simd
    for _p0 in range(1, B.shape[0] - 1, 1):
        _p0 = appy.vidx(_p0, appy.ROW_BLOCK, B.shape[0] - 1)
        #pragma parallel for simd
        for _i in range(1, B.shape[1] - 1, 1):
            _i = appy.vidx(_i, appy.MVL // appy.ROW_BLOCK, B.shape[1] - 1)
            B[_p0, _i] = A[_p0 - 1, _i] + A[_p0 + 1, _i] + A[_p0, _i - 1] + A[_p0, _i + 1] - 4.0 * A[_p0, _i]


def heat_3d_tiles(A, B, L, M, N):
    # Each worker takes one plane and sweeps it in 2-D tiles of 4 x 64.
    # _heat_3d_tiles_kernel0
    #pragma parallel for
    for _p0 in range(1, L - 1, 1):
        for _i_base in range(1, M - 1, 4):
            _i = appy.vidx(_i_base, 4, M - 1)
            for _i1_base in range(1, N - 1, 64):
                _i1 = appy.vidx(_i1_base, 64, N - 1)
                B[_p0, _i, _i1] = 0.125 * (A[_p0 + 1, _i, _i1] - 2.0 * A[_p0, _i, _i1] + A[_p0 - 1, _i, _i1]) + 0.125 * (A[_p0, _i + 1, _i1] - 2.0 * A[_p0, _i, _i1] + A[_p0, _i - 1, _i1]) + 0.125 * (A[_p0, _i, _i1 + 1] - 2.0 * A[_p0, _i, _i1] + A[_p0, _i, _i1 - 1]) + A[_p0, _i, _i1]
