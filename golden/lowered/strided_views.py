# appyc 0.1.0 --emit lowered: samples/strided_views.py after the high-level passes (assembly APPy).
"""Kernels the harness calls with strided, non-contiguous views.

The harness passes transposed arrays (`A.T`), every-other-column views (`A[:, ::2]`) and a
strided vector (`x[::3]`), for reading and for writing: the innermost stride is not 1.
"""
import numpy as np


def scale_add_2d(A, B, C, M, N, alpha):
    # _scale_add_2d_kernel0
    #pragma parallel for simd
    for i in range(0, M, 1):
        i = appy.vidx(i, appy.ROW_BLOCK, M)
        #pragma parallel for simd
        for j in range(0, N, 1):
            j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, N)
            C[i, j] = alpha * A[i, j] + B[i, j]


def row_sums(A, x, y, M, N):
    # _row_sums_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        acc = 0.0
        for _j_base in range(0, N, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, N)
            acc = acc + sum(A[i, j] * x[j])
        y[i] = acc
