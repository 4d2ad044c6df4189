"""syr2k (PolyBench / NPBench): C = alpha * (A B^T + B A^T) + beta * C on the lower triangle.

NPBench `paper` preset: M = 1000, N = 1200 (float64; C is N x N, A and B are N x M).
"""
import numpy as np


def syr2k(alpha, beta, C, A, B):
    N, M = A.shape
    # As syrk: one worker per (i, j <= i), two fused row dot products.
    #pragma parallel for
    for i in range(N):
        #pragma parallel for
        for j in range(N):
            if j <= i:
                C[i, j] = beta * C[i, j] + alpha * np.sum(A[j, :M] * B[i, :M] + B[j, :M] * A[i, :M])
