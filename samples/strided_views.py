"""Kernels the harness calls with strided, non-contiguous views.

The harness passes transposed arrays (`A.T`), every-other-column views (`A[:, ::2]`) and a
strided vector (`x[::3]`), for reading and for writing: the innermost stride is not 1.
"""
import numpy as np


def scale_add_2d(A, B, C, M, N, alpha):
    #pragma parallel for
    for i in range(M):
        #pragma parallel for
        for j in range(N):
            C[i, j] = alpha * A[i, j] + B[i, j]


def row_sums(A, x, y, M, N):
    #pragma parallel for
    for i in range(M):
        acc = 0.0
        #pragma simd
        for j in range(N):
            acc += A[i, j] * x[j]
        y[i] = acc
