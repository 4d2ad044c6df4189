"""1-D slices with explicit bounds inside a parallel loop (auto-vectorised vector statements).

Exercises: `C[i, :N] = A[i, :N] * alpha + B[i, :N]`, an in-place slice update with math, and a
slice with a nonzero lower bound.
"""
import numpy as np


def axpy_rows(A, B, C, M, N, alpha):
    #pragma parallel for
    for i in range(M):
        C[i, :N] = A[i, :N] * alpha + B[i, :N]


def tanh_rows_inplace(A, M, N):
    #pragma parallel for
    for i in range(M):
        A[i, :N] = np.tanh(A[i, :N]) * 0.5


def shift_rows(A, B, M, N):
    #pragma parallel for
    for i in range(M):
        B[i, 1:N] = A[i, 0:N - 1] * 2.0
