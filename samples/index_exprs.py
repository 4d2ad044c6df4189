"""Index expressions inside kernels.

Exercises: affine subscripts (`A[2 * i + 1, j - 1]`), gathers (`x[idx[i]]`), a scatter through a
permutation, negative constant indices (`A[i, -1]`, `A[i, -2]`), `A.shape[1]` inside a kernel,
and index arithmetic turned float (`i / n`, `i * 0.1`), which NumPy computes in fp64.
"""
import numpy as np


def affine_2d(A, B, M, N):
    #pragma parallel for
    for i in range(M):
        #pragma simd
        for j in range(1, N):
            B[i, j] = A[2 * i + 1, j - 1] - A[2 * i, j]


def gather_scatter(x, w, idx, perm, y, N):
    #pragma parallel for
    for i in range(N):
        y[perm[i]] = x[idx[i]] * w[perm[i]]


def last_columns(A, out, M):
    #pragma parallel for
    for i in range(M):
        out[i] = A[i, -1] - 2.0 * A[i, -2] + A[i, A.shape[1] - 3]


def ramp(y, n):
    # Python ints: `i / n` and `i * 0.1` are fp64 values (Triton alone would give fp32).
    #pragma parallel for simd
    for i in range(n):
        y[i] = i / n + i * 0.1
