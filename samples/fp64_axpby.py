"""Double-precision kernels whose Python float parameters must stay fp64.

Exercises: fp64 arrays with a scalar `beta=1.2` (1.2 is not exact in fp32: a kernel that passes
it as fp32 is off by ~4e-8 relative, which the harness detects at 1e-12), and an fp64 scalar
accumulator `acc = 0.0` in a `#pragma simd` loop.
"""
import numpy as np


def axpby(alpha, X, beta, Y, N):
    #pragma parallel for simd
    for i in range(N):
        Y[i] = alpha * X[i] + beta * Y[i]


def gemv_fp64(A, x, y, M, N, beta):
    #pragma parallel for
    for i in range(M):
        acc = 0.0
        #pragma simd
        for j in range(N):
            acc += A[i, j] * x[j]
        y[i] = beta * y[i] + acc
