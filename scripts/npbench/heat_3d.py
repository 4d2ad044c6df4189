"""heat_3d (PolyBench / NPBench): explicit 3-D heat equation, TSTEPS steps of two half-sweeps.

Math: B = A + 0.125 * (second difference of A along each of the three axes) on the interior,
then the same from B into A. NPBench `paper` preset: TSTEPS = 500, N = 120 (float64, N^3 grid).
"""
import numpy as np


def heat_3d(TSTEPS, A, B):
    # One name per axis (all equal here): appyc identifies a dimension by its slice.
    L, M, N = A.shape
    for t in range(TSTEPS):
        #pragma 1:L-1=>parallel 1:M-1=>parallel 1:N-1=>simd
        B[1:L-1, 1:M-1, 1:N-1] = (
            0.125 * (A[2:L, 1:M-1, 1:N-1] - 2.0 * A[1:L-1, 1:M-1, 1:N-1] + A[0:L-2, 1:M-1, 1:N-1])
            + 0.125 * (A[1:L-1, 2:M, 1:N-1] - 2.0 * A[1:L-1, 1:M-1, 1:N-1] + A[1:L-1, 0:M-2, 1:N-1])
            + 0.125 * (A[1:L-1, 1:M-1, 2:N] - 2.0 * A[1:L-1, 1:M-1, 1:N-1] + A[1:L-1, 1:M-1, 0:N-2])
            + A[1:L-1, 1:M-1, 1:N-1])
        #pragma 1:L-1=>parallel 1:M-1=>parallel 1:N-1=>simd
        A[1:L-1, 1:M-1, 1:N-1] = (
            0.125 * (B[2:L, 1:M-1, 1:N-1] - 2.0 * B[1:L-1, 1:M-1, 1:N-1] + B[0:L-2, 1:M-1, 1:N-1])
            + 0.125 * (B[1:L-1, 2:M, 1:N-1] - 2.0 * B[1:L-1, 1:M-1, 1:N-1] + B[1:L-1, 0:M-2, 1:N-1])
            + 0.125 * (B[1:L-1, 1:M-1, 2:N] - 2.0 * B[1:L-1, 1:M-1, 1:N-1] + B[1:L-1, 1:M-1, 0:N-2])
            + B[1:L-1, 1:M-1, 1:N-1])
