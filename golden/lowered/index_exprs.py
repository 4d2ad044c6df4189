# appyc 0.1.0 --emit lowered: samples/index_exprs.py after the high-level passes (assembly APPy).
"""Index expressions inside kernels.

Exercises: affine subscripts (`A[2 * i + 1, j - 1]`), gathers (`x[idx[i]]`), a scatter through a
permutation, negative constant indices (`A[i, -1]`, `A[i, -2]`), `A.shape[1]` inside a kernel,
and index arithmetic turned float (`i / n`, `i * 0.1`), which NumPy computes in fp64.
"""
import numpy as np


def affine_2d(A, B, M, N):
    # _affine_2d_kernel0
    #pragma parallel for simd
    for i in range(0, M, 1):
        i = appy.vidx(i, appy.ROW_BLOCK, M)
        #pragma parallel for simd
        for j in range(1, N, 1):
            j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, N)
            B[i, j] = A[2 * i + 1, j - 1] - A[2 * i, j]


def gather_scatter(x, w, idx, perm, y, N):
    # _gather_scatter_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        y[perm[i]] = x[idx[i]] * w[perm[i]]


def last_columns(A, out, M):
    # _last_columns_kernel0
    #pragma parallel for simd
    for i in range(0, M, 1):
        i = appy.vidx(i, appy.MVL, M)
        out[i] = A[i, A.shape[1] - 1] - 2.0 * A[i, A.shape[1] - 2] + A[i, A.shape[1] - 3]


def ramp(y, n):
    # Python ints: `i / n` and `i * 0.1` are fp64 values (Triton alone would give fp32).
    # _ramp_kernel0
    #pragma parallel for simd
    for i in range(0, n, 1):
        i = appy.vidx(i, appy.MVL, n)
        y[i] = i / n + i * 0.1
