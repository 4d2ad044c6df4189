"""Directly nested parallel loops: 2-D and 3-D grids.

Exercises: a `#pragma parallel for` nested directly inside another (one grid dimension each),
bounds from scalars and from `A.shape[d]`, a transposed read `B[j, i]`, and a 3-D nest. A nested
loop whose bounds use the outer loop's variable or a scalar computed before it (a triangle) is
no rectangle of programs: it runs inside each program, as a vector strip when its body is
element assignments (upper_scale), else one iteration after another (lower_clip).
"""
import numpy as np


def add_transpose(A, B, C, M, N, alpha):
    #pragma parallel for
    for i in range(M):
        #pragma parallel for
        for j in range(N):
            C[i, j] = alpha * A[i, j] + B[j, i]


def scale_shape(A, C, beta):
    #pragma parallel for
    for i in range(A.shape[0]):
        #pragma parallel for
        for j in range(A.shape[1]):
            C[i, j] = A[i, j] * beta - 1.0


def stencil_3d(A, B, L, M, N):
    #pragma parallel for
    for i in range(1, L - 1):
        #pragma parallel for
        for j in range(1, M - 1):
            #pragma parallel for
            for k in range(1, N - 1):
                B[i, j, k] = (A[i - 1, j, k] + A[i + 1, j, k] + A[i, j - 1, k]
                              + A[i, j + 1, k] + A[i, j, k - 1] + A[i, j, k + 1]
                              - 6.0 * A[i, j, k])


def upper_scale(A, B, N):
    #pragma parallel for
    for i in range(N):
        #pragma parallel for
        for j in range(i, N):
            B[i, j] = 2.0 * A[i, j] + A[j, i]


def lower_clip(A, B, N):
    #pragma parallel for
    for i in range(N):
        n = i + 1
        #pragma parallel for
        for j in range(n):
            if A[i, j] > 0.0:
                B[i, j] = A[i, j]
            else:
                B[i, j] = -A[i, j]
