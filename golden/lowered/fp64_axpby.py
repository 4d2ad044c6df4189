# appyc 0.1.0 --emit lowered: samples/fp64_axpby.py after the high-level passes (assembly APPy).
"""Double-precision kernels whose Python float parameters must stay fp64.

Exercises: fp64 arrays with a scalar `beta=1.2` (1.2 is not exact in fp32: a kernel that passes
it as fp32 is off by ~4e-8 relative, which the harness detects at 1e-12), and an fp64 scalar
accumulator `acc = 0.0` in a `#pragma simd` loop.
"""
import numpy as np


def axpby(alpha, X, beta, Y, N):
    # _axpby_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        Y[i] = alpha * X[i] + beta * Y[i]


def gemv_fp64(A, x, y, M, N, beta):
    # _gemv_fp64_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        acc = 0.0
        for _j_base in range(0, N, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, N)
            acc = acc + sum(A[i, j] * x[j])
        y[i] = beta * y[i] + acc
