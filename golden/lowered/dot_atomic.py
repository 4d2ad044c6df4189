# appyc 0.1.0 --emit lowered: samples/dot_atomic.py after the high-level passes (assembly APPy).
"""Parallel reductions into a one-element array (paper Listing 5).

Exercises: `#pragma parallel for simd` with a `#pragma atomic` update `s[0] += ...` (each worker
reduces its vector, then issues one atomic), the `-=` form, and an fp64 variant.
"""
import numpy as np


def dot(A, B, s, N):
    # _dot_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        #pragma atomic
        s[0] = s[0] + sum(A[i] * B[i])


def neg_sum(A, s, N):
    # _neg_sum_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        #pragma atomic
        s[0] = s[0] - sum(A[i])


def dot_fp64(A, B, s, N):
    # _dot_fp64_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        #pragma atomic
        s[0] = s[0] + sum(A[i] * B[i])
