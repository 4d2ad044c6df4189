"""trmm (PolyBench / NPBench): B = alpha * (I + L^T) B, L the strictly lower part of A.

Math: B[i, j] = alpha * (B[i, j] + sum_{k > i} A[k, i] * B[k, j]) with every B on the right
the input B (PolyBench's loop reads rows k > i before it updates them). A is M x M (its
diagonal and upper part unused), B is M x N. NPBench `paper` preset: M = 1000, N = 1200
(float64).
"""
import numpy as np


def trmm(alpha, A, B):
    M, N = B.shape
    # Row i reads the rows below it, which other workers update: the sums go to T first.
    T = np.empty_like(B)
    #pragma parallel for
    for i in range(M):
        for j in range(N):
            s = 0.0
            #pragma simd
            for k in range(i + 1, M):
                s += A[k, i] * B[k, j]
            T[i, j] = B[i, j] + s
    #pragma parallel for
    for i in range(M):
        #pragma simd
        for j in range(N):
            B[i, j] = alpha * T[i, j]
