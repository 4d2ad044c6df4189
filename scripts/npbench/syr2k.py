"""syr2k (PolyBench / NPBench): C = alpha * (A B^T + B A^T) + beta * C on the lower triangle.

NPBench `paper` preset: M = 1000, N = 1200 (float64; C is N x N, A and B are N x M).
"""
import numpy as np


def syr2k(alpha, beta, C, A, B):
    N, M = A.shape
    # As syrk: one worker per row of C, scaled, then two fused rank-1 updates per k.
    #pragma parallel for
    for i in range(N):
        #pragma simd
        for j in range(i + 1):
            C[i, j] *= beta
        for k in range(M):
            #pragma simd
            for j in range(i + 1):
                C[i, j] += A[j, k] * alpha * B[i, k] + B[j, k] * alpha * A[i, k]
