# appyc 0.1.0 --emit lowered: samples/outer_product.py after the high-level passes (assembly APPy).
"""Broadcast outer products: `x[:M, None] * y[None, :N]`.

Exercises: `None` axes in sliced index notation at function level, with `=` and `+=`.
"""
import numpy as np


def outer(x, y, C, M, N):
    # _outer_kernel0
    #pragma parallel for
    for _p0 in range(0, M, 1):
        for _i_base in range(0, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            C[_p0, _i] = x[_p0] * y[_i]


def rank1_update(alpha, x, y, C, M, N):
    # _rank1_update_kernel0
    #pragma parallel for
    for _p0 in range(0, M, 1):
        for _i_base in range(0, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            C[_p0, _i] = C[_p0, _i] + alpha * x[_p0] * y[_i]


def outer_tile(x, y, C, M, N):
    # _outer_tile_kernel0
    #pragma sequential for
    for _i_base in range(0, M, 8):
        _i = appy.vidx(_i_base, 8, M)
        for _i1_base in range(0, N, appy.MVL):
            _i1 = appy.vidx(_i1_base, appy.MVL, N)
            C[_i, _i1] = x[_i] * y[_i1] + C[_i, _i1]
