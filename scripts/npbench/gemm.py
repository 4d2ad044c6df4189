"""gemm (PolyBench / NPBench): C = alpha * A B + beta * C.

A is NI x NK, B is NK x NJ, C is NI x NJ. NPBench `paper` preset: NI = 2000, NJ = 2300,
NK = 2600 (float64).
"""
import numpy as np


def gemm(alpha, beta, C, A, B):
    NI, NK = A.shape
    NJ = B.shape[1]
    # One worker per row of C: scale the row, then one rank-1 update of it per k (the row of B
    # contiguous, vectorised), as PolyBench writes it.
    #pragma parallel for
    for i in range(NI):
        #pragma simd
        for j in range(NJ):
            C[i, j] *= beta
        for k in range(NK):
            #pragma simd
            for j in range(NJ):
                C[i, j] += alpha * A[i, k] * B[k, j]
