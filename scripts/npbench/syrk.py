"""syrk (PolyBench / NPBench): C = alpha * A A^T + beta * C on the lower triangle (j <= i).

NPBench `paper` preset: M = 1000, N = 1200 (float64; C is N x N, A is N x M).
"""
import numpy as np


def syrk(alpha, beta, C, A):
    N, M = A.shape
    # One worker per row of C: scale its lower part, then one rank-1 update of it per k.
    #pragma parallel for
    for i in range(N):
        #pragma simd
        for j in range(i + 1):
            C[i, j] *= beta
        for k in range(M):
            #pragma simd
            for j in range(i + 1):
                C[i, j] += alpha * A[i, k] * A[j, k]
