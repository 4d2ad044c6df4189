"""More single-GPU stencils made multi-GPU by `#pragma distribute` (issue 24, part 3).

Exercises: a sweep whose result is copied back (only A is exchanged, so nothing orders a fast
PE's next put after its neighbour's reads: appyc adds an acknowledgement on a second flag set),
a halo of two rows from a radius-2 stencil, a 1-D loop-form stencil (`parallel for simd`), and a
3-D stencil whose rows are planes (one put per halo plane).
"""
import numpy as np


def smooth_copy_back(A, B, M, N, T):
    #pragma distribute(A, B)
    for t in range(T):
        #pragma 2:M-2=>parallel 1:N-1=>parallel
        B[2:M-2, 1:N-1] = 0.25 * (A[4:M, 1:N-1] + A[0:M-4, 1:N-1]) + 0.5 * A[2:M-2, :N-2]
        #pragma 2:M-2=>parallel 1:N-1=>parallel
        A[2:M-2, 1:N-1] = B[2:M-2, 1:N-1]


def jacobi_1d(A, B, N, T):
    #pragma distribute(A, B)
    for t in range(T):
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1])
        #pragma parallel for simd
        for i in range(1, N - 1):
            A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1])


def relax_counted(A, B, N, T):
    # Host scalars in a distributed loop: a weight the loop recomputes each step (a register
    # the sweeps read) and a count of sweeps the function returns.
    sweeps = 0
    #pragma distribute(A, B)
    for t in range(T):
        w = 0.25 + 0.125 * (t % 2)
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = A[i] + w * (A[i - 1] - 2.0 * A[i] + A[i + 1])
        #pragma parallel for simd
        for i in range(1, N - 1):
            A[i] = B[i] + w * (B[i - 1] - 2.0 * B[i] + B[i + 1])
        sweeps = sweeps + 2
    return sweeps


def heat_3d(A, B, L, M, N, T):
    #pragma distribute(A, B)
    for t in range(T):
        #pragma 1:L-1=>parallel 1:M-1=>parallel 1:N-1=>parallel
        B[1:L-1, 1:M-1, 1:N-1] = (0.125 * (A[2:, 1:M-1, 1:N-1] - 2.0 * A[1:L-1, 1:M-1, 1:N-1] + A[:L-2, 1:M-1, 1:N-1])
                                  + 0.125 * (A[1:L-1, 2:, 1:N-1] - 2.0 * A[1:L-1, 1:M-1, 1:N-1] + A[1:L-1, :M-2, 1:N-1])
                                  + A[1:L-1, 1:M-1, 1:N-1])
        #pragma 1:L-1=>parallel 1:M-1=>parallel 1:N-1=>parallel
        A[1:L-1, 1:M-1, 1:N-1] = (0.125 * (B[2:, 1:M-1, 1:N-1] - 2.0 * B[1:L-1, 1:M-1, 1:N-1] + B[:L-2, 1:M-1, 1:N-1])
                                  + 0.125 * (B[1:L-1, 2:, 1:N-1] - 2.0 * B[1:L-1, 1:M-1, 1:N-1] + B[1:L-1, :M-2, 1:N-1])
                                  + B[1:L-1, 1:M-1, 1:N-1])


def three_sweeps(A, B, C, N, T):
    # A is read by the first and third sweeps and written by the second: it is exchanged once,
    # before the third, and the next iteration's first sweep acknowledges reading its halo.
    #pragma distribute(A, B, C)
    for t in range(T):
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = 0.5 * (A[i - 1] + A[i + 1])
        #pragma parallel for simd
        for i in range(1, N - 1):
            A[i] = 0.75 * B[i] + 0.25 * C[i]
        #pragma parallel for simd
        for i in range(1, N - 1):
            C[i] = A[i + 1] - 0.5 * C[i]
