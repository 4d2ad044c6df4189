"""gemver (PolyBench / NPBench), written as APPy users write it: three `parallel for` loops.

Math: A += u1 v1^T + u2 v2^T;  x += beta * A^T y;  x += z;  w += alpha * A x.
NPBench `paper` preset: N = 8000 (float64).
"""
import numpy as np


def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    N = A.shape[0]
    # The two rank-1 terms: one worker per row.
    #pragma parallel for
    for i in range(N):
        #pragma simd
        for j in range(N):
            A[i, j] = A[i, j] + u1[i] * v1[j] + u2[i] * v2[j]
    # A^T y: each worker sums its columns down the rows.
    #pragma parallel for simd
    for j in range(N):
        s = 0.0
        for i in range(N):
            s += A[i, j] * y[i]
        x[j] = x[j] + beta * s
        x[j] = x[j] + z[j]
    # A x: one row dot product per worker.
    #pragma parallel for
    for i in range(N):
        s = 0.0
        #pragma simd
        for j in range(N):
            s += A[i, j] * x[j]
        w[i] = w[i] + alpha * s
