"""Self-dependent in-place updates (paper Figure 2): the target is read at a shifted slice.

Exercises: temporary arrays (Alg. 5) inside a parallel loop and at function level, and the
proof that skips them when every read of the target is at the written element.
"""
import numpy as np


def smooth_rows(A, M, N):
    #pragma parallel for
    for i in range(M):
        A[i, 1:N] = 0.5 * (A[i, :N-1] + A[i, 1:N])


def smooth_vector(x, N):
    #pragma 1:N=>simd
    x[1:N] = 0.5 * (x[:N-1] + x[1:N])


def scale_in_place(A, M, N, s):
    #pragma :M=>parallel :N=>simd
    A[:M, :N] = A[:M, :N] * s + 1.0
