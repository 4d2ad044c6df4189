"""Parallel reductions into a one-element array (paper Listing 5).

Exercises: `#pragma parallel for simd` with a `#pragma atomic` update `s[0] += ...` (each worker
reduces its vector, then issues one atomic), the `-=` form, and an fp64 variant.
"""
import numpy as np


def dot(A, B, s, N):
    #pragma parallel for simd
    for i in range(N):
        #pragma atomic
        s[0] += A[i] * B[i]


def neg_sum(A, s, N):
    #pragma parallel for simd
    for i in range(N):
        #pragma atomic
        s[0] -= A[i]


def dot_fp64(A, B, s, N):
    #pragma parallel for simd
    for i in range(N):
        #pragma atomic
        s[0] += A[i] * B[i]
