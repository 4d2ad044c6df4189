"""Host time loops run on the GPU as one persistent kernel (the seeds' autonomous execution).

Exercises: a host `for` whose body is only parallel regions becoming one persistent kernel by
itself (jacobi_1d) and on request (`#pragma persistent for`, floyd_warshall); grid barriers
only between dependent phases (independent_phases); the loop variable used in kernels, with a
start and a step (shifted_steps); a `sequential for` region as a phase (prefix_steps); a 2-D
grid region as a phase (smooth_2d); and a loop with host code in its body, which keeps one
launch per region (host_code_in_loop).
"""
import numpy as np


def jacobi_1d(A, B, N, TSTEPS):
    for t in range(TSTEPS):
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1])
        #pragma parallel for simd
        for i in range(1, N - 1):
            A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1])


def floyd_warshall(path, N):
    # Row k and column k do not change in step k (the diagonal is 0), so rows are independent.
    #pragma persistent for
    for k in range(N):
        #pragma parallel for
        for i in range(N):
            #pragma simd
            for j in range(N):
                path[i, j] = min(path[i, j], path[i, k] + path[k, j])


def independent_phases(X, Y, Z, N, T):
    # X and Y are updated independently (no barrier between them); Z reads both.
    for t in range(T):
        #pragma parallel for simd
        for i in range(N):
            X[i] = X[i] * 0.9 + 0.1
        #pragma parallel for simd
        for i in range(N):
            Y[i] = Y[i] * 0.5 - 0.25
        #pragma parallel for simd
        for i in range(N):
            Z[i] = Z[i] + X[N - 1 - i] * Y[i]


def shifted_steps(X, Y, N, T0, T):
    for t in range(T0, T, 3):
        #pragma parallel for simd
        for i in range(N):
            X[i] = X[i] * 0.5 + t
        #pragma parallel for
        for i in range(N):
            Y[i] = Y[i] + X[N - 1 - i]


def prefix_steps(A, N, T):
    for t in range(T):
        #pragma sequential for
        for i in range(1, N):
            A[i] = A[i] + A[i - 1] * 0.5
        #pragma parallel for simd
        for i in range(N):
            A[i] = A[i] * 0.5


def smooth_2d(A, B, M, N, T):
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma parallel for
            for j in range(1, N - 1):
                B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma parallel for
            for j in range(1, N - 1):
                A[i, j] = B[i, j]


def host_code_in_loop(A, N, T):
    for t in range(T):
        scale = 1.0 / (t + 1)
        #pragma parallel for simd
        for i in range(N):
            A[i] = A[i] * scale + 1.0
