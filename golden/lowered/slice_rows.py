# appyc 0.1.0 --emit lowered: samples/slice_rows.py after the high-level passes (assembly APPy).
"""1-D slices with explicit bounds inside a parallel loop (auto-vectorised vector statements).

Exercises: `C[i, :N] = A[i, :N] * alpha + B[i, :N]`, an in-place slice update with math, and a
slice with a nonzero lower bound.
"""
import numpy as np


def axpy_rows(A, B, C, M, N, alpha):
    # _axpy_rows_kernel0
    #pragma parallel for simd
    for i in range(0, M, 1):
        i = appy.vidx(i, appy.ROW_BLOCK, M)
        #pragma parallel for simd
        for _i in range(0, N, 1):
            _i = appy.vidx(_i, appy.MVL // appy.ROW_BLOCK, N)
            C[i, _i] = A[i, _i] * alpha + B[i, _i]


def tanh_rows_inplace(A, M, N):
    # _tanh_rows_inplace_kernel0
    #pragma parallel for simd
    for i in range(0, M, 1):
        i = appy.vidx(i, appy.ROW_BLOCK, M)
        #pragma parallel for simd
        for _i in range(0, N, 1):
            _i = appy.vidx(_i, appy.MVL // appy.ROW_BLOCK, N)
            A[i, _i] = np.tanh(A[i, _i]) * 0.5


def shift_rows(A, B, M, N):
    # _shift_rows_kernel0
    #pragma parallel for simd
    for i in range(0, M, 1):
        i = appy.vidx(i, appy.ROW_BLOCK, M)
        #pragma parallel for simd
        for _i in range(1, N, 1):
            _i = appy.vidx(_i, appy.MVL // appy.ROW_BLOCK, N)
            B[i, _i] = A[i, _i - 1] * 2.0
