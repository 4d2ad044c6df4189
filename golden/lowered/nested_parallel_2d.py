# appyc 0.1.0 --emit lowered: samples/nested_parallel_2d.py after the high-level passes (assembly APPy).
"""Directly nested parallel loops: 2-D and 3-D grids.

Exercises: a `#pragma parallel for` nested directly inside another (one grid dimension each),
bounds from scalars and from `A.shape[d]`, a transposed read `B[j, i]`, and a 3-D nest. A nested
loop whose bounds use the outer loop's variable or a scalar computed before it (a triangle) is
no rectangle of programs: it runs inside each program, as a vector strip when its body is
element assignments (upper_scale), else one iteration after another (lower_clip).
"""
import numpy as np


def add_transpose(A, B, C, M, N, alpha):
    # _add_transpose_kernel0
    #pragma parallel for simd
    for i in range(0, M, 1):
        i = appy.vidx(i, appy.ROW_BLOCK, M)
        #pragma parallel for simd
        for j in range(0, N, 1):
            j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, N)
            C[i, j] = alpha * A[i, j] + B[j, i]


def scale_shape(A, C, beta):
    # _scale_shape_kernel0
    #pragma parallel for simd
    for i in range(0, A.shape[0], 1):
        i = appy.vidx(i, appy.ROW_BLOCK, A.shape[0])
        #pragma parallel for simd
        for j in range(0, A.shape[1], 1):
            j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, A.shape[1])
            C[i, j] = A[i, j] * beta - 1.0


def stencil_3d(A, B, L, M, N):
    # _stencil_3d_kernel0
    #pragma parallel for
    for i in range(1, L - 1, 1):
        #pragma parallel for simd
        for j in range(1, M - 1, 1):
            j = appy.vidx(j, appy.ROW_BLOCK, M - 1)
            #pragma parallel for simd
            for k in range(1, N - 1, 1):
                k = appy.vidx(k, appy.MVL // appy.ROW_BLOCK, N - 1)
                B[i, j, k] = A[i - 1, j, k] + A[i + 1, j, k] + A[i, j - 1, k] + A[i, j + 1, k] + A[i, j, k - 1] + A[i, j, k + 1] - 6.0 * A[i, j, k]


def upper_scale(A, B, N):
    # _upper_scale_kernel0
    #pragma parallel for
    for i in range(0, N, 1):
        for _j_base in range(i, N, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, N)
            B[i, j] = 2.0 * A[i, j] + A[j, i]


def lower_clip(A, B, N):
    # _lower_clip_kernel0
    #pragma parallel for
    for i in range(0, N, 1):
        n = i + 1
        for j in range(0, n, 1):
            if A[i, j] > 0.0:
                B[i, j] = A[i, j]
            else:
                B[i, j] = -A[i, j]
