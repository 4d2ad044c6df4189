"""syrk (PolyBench / NPBench): C = alpha * A A^T + beta * C on the lower triangle (j <= i).

NPBench `paper` preset: M = 1000, N = 1200 (float64; C is N x N, A is N x M).
"""
import numpy as np


def syrk(alpha, beta, C, A):
    N, M = A.shape
    # One worker per element of the square; those above the diagonal do nothing. Each element is
    # a dot product of two rows of A (contiguous, vectorised) instead of a rank-1 update per k.
    #pragma parallel for
    for i in range(N):
        #pragma parallel for
        for j in range(N):
            if j <= i:
                C[i, j] = beta * C[i, j] + alpha * np.sum(A[i, :M] * A[j, :M])
