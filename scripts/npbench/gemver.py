"""gemver (PolyBench / NPBench): rank-2 update, then two matrix-vector products.

Math: A += u1 v1^T + u2 v2^T;  x += beta * A^T y + z;  w += alpha * A x.
NPBench `paper` preset: N = 8000 (float64).
"""
import numpy as np


def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    N = A.shape[0]
    # Rank-2 update: one worker per row, the row vectorised.
    #pragma parallel for
    for i in range(N):
        A[i, :N] += u1[i] * v1[:N] + u2[i] * v2[:N]
    # x = A^T y: columns are contiguous lanes, so each worker takes MVL columns and walks the
    # rows (coalesced reads) instead of reducing a strided column.
    #pragma parallel for simd
    for j in range(N):
        s = 0.0
        for i in range(N):
            s += y[i] * A[i, j]
        x[j] += beta * s + z[j]
    # w = A x: one row dot product per worker.
    #pragma parallel for
    for i in range(N):
        w[i] += alpha * np.sum(A[i, :N] * x[:N])
