"""gesummv (PolyBench / NPBench): y = alpha * A x + beta * B x, returned.

NPBench `paper` preset: N = 11200 (float64, A and B are N x N).
"""
import numpy as np


def gesummv(alpha, beta, A, B, x):
    # Rows M and columns N named apart (M == N here): appyc identifies dimensions by slices.
    M, N = A.shape
    y = np.empty(M)
    # Both products fused into one pass: row workers, the contracted dimension reduced.
    #pragma :M=>parallel :N=>reduce(sum)
    y[:M] = alpha * (A[:M, :N] @ x[:N]) + beta * (B[:M, :N] @ x[:N])
    return y
