# appyc 0.1.0 --emit lowered: samples/vector_add.py after the high-level passes (assembly APPy).
"""Vector addition (paper Listings 3 and 4).

Exercises: `#pragma parallel for`, its alias `#pragma parallel`, `#pragma parallel for simd` on a
top-level loop, and loop bounds given by a scalar, by `A.shape[0]` and by start/stop/step scalars.
"""
import numpy as np


def vector_add(A, B, C, N):
    # _vector_add_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        C[i] = A[i] + B[i]


def vector_add_simd(A, B, C, N):
    # _vector_add_simd_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        C[i] = A[i] + B[i]


def vector_add_shape(A, B, C):
    # _vector_add_shape_kernel0
    #pragma parallel for simd
    for i in range(0, A.shape[0], 1):
        i = appy.vidx(i, appy.MVL, A.shape[0])
        C[i] = A[i] + B[i]


def axpy_range(a, X, Y, start, stop, step):
    # Only the iterations start, start+step, ... < stop are touched; the rest of Y is unchanged.
    # _axpy_range_kernel0
    #pragma parallel for simd
    for i in range(start, stop, step):
        i = appy.vidx(i, appy.MVL, stop)
        Y[i] = a * X[i] + Y[i]
