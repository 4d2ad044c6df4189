"""Vector addition (paper Listings 3 and 4).

Exercises: `#pragma parallel for`, its alias `#pragma parallel`, `#pragma parallel for simd` on a
top-level loop, and loop bounds given by a scalar, by `A.shape[0]` and by start/stop/step scalars.
"""
import numpy as np


def vector_add(A, B, C, N):
    #pragma parallel for
    for i in range(N):
        C[i] = A[i] + B[i]


def vector_add_simd(A, B, C, N):
    #pragma parallel for simd
    for i in range(N):
        C[i] = A[i] + B[i]


def vector_add_shape(A, B, C):
    #pragma parallel
    for i in range(A.shape[0]):
        C[i] = A[i] + B[i]


def axpy_range(a, X, Y, start, stop, step):
    # Only the iterations start, start+step, ... < stop are touched; the rest of Y is unchanged.
    #pragma parallel for
    for i in range(start, stop, step):
        Y[i] = a * X[i] + Y[i]
