# appyc 0.1.0 --emit lowered: samples/outer_product.py after the high-level passes (assembly APPy).
"""Broadcast outer products: `x[:M, None] * y[None, :N]`.

Exercises: `None` axes in sliced index notation at function level, with `=` and `+=`.
"""
import numpy as np


def outer(x, y, C, M, N):
    # _outer_kernel0
    #pragma parallel for simd
    for _p0 in range(0, M, 1):
        _p0 = appy.vidx(_p0, appy.ROW_BLOCK, M)
        #pragma parallel for simd
        for _i in range(0, N, 1):
            _i = appy.vidx(_i, appy.MVL // appy.ROW_BLOCK, N)
            C[_p0, _i] = x[_p0] * y[_i]


def rank1_update(alpha, x, y, C, M, N):
    # _rank1_update_kernel0
    #pragma parallel for simd
    for _p0 in range(0, M, 1):
        _p0 = appy.vidx(_p0, appy.ROW_BLOCK, M)
        #pragma parallel for simd
        for _i in range(0, N, 1):
            _i = appy.vidx(_i, appy.MVL // appy.ROW_BLOCK, N)
            C[_p0, _i] = C[_p0, _i] + alpha * x[_p0] * y[_i]



def batched_outer(x, y, C, B, M, N):
    # One 2-D tile (8 rows x MVL columns) per strip, one batch per worker.
    # _batched_outer_kernel0
    #pragma parallel for
    for _p0 in range(0, B, 1):
        for _i_base in range(0, M, 8):
            _i = appy.vidx(_i_base, 8, M)
            for _i1_base in range(0, N, appy.MVL):
                _i1 = appy.vidx(_i1_base, appy.MVL, N)
                C[_p0, _i, _i1] = x[_p0, _i] * y[_p0, _i1] + C[_p0, _i, _i1]
