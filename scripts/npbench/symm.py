"""symm (PolyBench / NPBench): C = alpha * S B + beta * C, S symmetric, stored in A's lower part.

Math: S[i, k] = A[i, k] for k <= i and A[k, i] for k > i, so
C[i, j] = beta * C[i, j] + alpha * (sum_{k < i} A[i, k] B[k, j] + A[i, i] B[i, j]
+ sum_{k > i} A[k, i] B[k, j]); A's upper part is never read. A is M x M, B and C are M x N.
NPBench `paper` preset: M = 1000, N = 1200 (float64).
"""
import numpy as np


def symm(alpha, beta, C, A, B):
    M, N = C.shape
    # One worker per row of C, its columns vectorised; the row of S is A's row i left of the
    # diagonal and A's column i below it.
    #pragma parallel for
    for i in range(M):
        #pragma simd
        for j in range(N):
            s = 0.0
            for k in range(i):
                s += A[i, k] * B[k, j]
            for k in range(i + 1, M):
                s += A[k, i] * B[k, j]
            C[i, j] = beta * C[i, j] + alpha * A[i, i] * B[i, j] + alpha * s
