# appyc 0.1.0 --emit lowered: samples/time_loops.py after the high-level passes (assembly APPy).
"""Host time loops run on the GPU as one persistent kernel (the seeds' autonomous execution).

Exercises: a host `for` whose body is only parallel regions becoming one persistent kernel by
itself (jacobi_1d) and on request (`#pragma persistent for`, floyd_warshall); grid barriers
only between dependent phases (independent_phases); the loop variable used in kernels, with a
start and a step (shifted_steps); a `sequential for` region as a phase (prefix_steps); a 2-D
grid region as a phase (smooth_2d); two phases writing different rows of one array with no
barrier between them (yee_steps, fdtd_2d's step); and a loop with a host scalar statement in
its body, which every program of the persistent kernel computes (host_code_in_loop). 1-D stencil loops (jacobi_1d, and
smooth_1d_slices in tensor statements with a radius of 2 and a scalar) also get a temporally
blocked kernel.
"""
import numpy as np


def jacobi_1d(A, B, N, TSTEPS):
    for t in range(TSTEPS):
        # _jacobi_1d_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1])
        # _jacobi_1d_kernel1
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1])


def smooth_1d_slices(A, B, alpha, N, T):
    # Tensor statements reading two elements away; B's first and last two elements are never
    # written, A's first and last only read.
    for t in range(T):
        # _smooth_1d_slices_kernel0
        #pragma parallel for simd
        for _p0 in range(2, N - 2, 1):
            _p0 = appy.vidx(_p0, appy.MVL, N - 2)
            B[_p0] = alpha * (A[_p0 - 2] + A[_p0 + 2]) + (1.0 - 2.0 * alpha) * A[_p0] / 1.5
        # _smooth_1d_slices_kernel1
        #pragma parallel for simd
        for _p0 in range(1, N - 1, 1):
            _p0 = appy.vidx(_p0, appy.MVL, N - 1)
            A[_p0] = 0.5 * (B[_p0 - 1] - B[_p0 + 1]) + B[_p0]


def floyd_warshall(path, N):
    # Row k and column k do not change in step k (the diagonal is 0), so rows are independent.
    #pragma persistent for
    for k in range(N):
        # _floyd_warshall_kernel0
        #pragma parallel for
        for i in range(0, N, 1):
            for _j_base in range(0, N, appy.MVL):
                j = appy.vidx(_j_base, appy.MVL, N)
                appy.syncthreads()
                path[i, j] = min(path[i, j], path[i, k] + path[k, j])
                appy.syncthreads()


def independent_phases(X, Y, Z, N, T):
    # X and Y are updated independently (no barrier between them); Z reads both, each at
    # another iteration's element (so Z's loop joins neither: passes/join_regions.rs).
    for t in range(T):
        # _independent_phases_kernel0
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            X[i] = X[i] * 0.9 + 0.1
        # _independent_phases_kernel1
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            Y[i] = Y[i] * 0.5 - 0.25
        # _independent_phases_kernel2
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            Z[i] = Z[i] + X[N - 1 - i] * Y[N - 1 - i]


def shifted_steps(X, Y, N, T0, T):
    for t in range(T0, T, 3):
        # _shifted_steps_kernel0
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            X[i] = X[i] * 0.5 + t
        # _shifted_steps_kernel1
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            Y[i] = Y[i] + X[N - 1 - i]


def prefix_steps(A, N, T):
    for t in range(T):
        # _prefix_steps_kernel0
        #pragma sequential for
        for i in range(1, N, 1):
            appy.syncthreads()
            A[i] = A[i] + A[i - 1] * 0.5
            appy.syncthreads()
        # _prefix_steps_kernel1
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            A[i] = A[i] * 0.5


def smooth_2d(A, B, M, N, T):
    for t in range(T):
        # _smooth_2d_kernel0
        #pragma parallel for simd
        for i in range(1, M - 1, 1):
            i = appy.vidx(i, appy.ROW_BLOCK, M - 1)
            #pragma parallel for simd
            for j in range(1, N - 1, 1):
                j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, N - 1)
                B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        # _smooth_2d_kernel1
        #pragma parallel for simd
        for i in range(1, M - 1, 1):
            i = appy.vidx(i, appy.ROW_BLOCK, M - 1)
            #pragma parallel for simd
            for j in range(1, N - 1, 1):
                j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, N - 1)
                A[i, j] = B[i, j]


def yee_steps(ex, ey, hz, fict, M, N, T):
    # fdtd_2d's step. Row 0 of ey and its other rows are written by two phases that share a
    # phase of the persistent kernel (no barrier between them: they touch different elements);
    # ex needs none either; hz reads both, and the next step reads hz.
    for t in range(T):
        # _yee_steps_kernel0
        #pragma parallel for simd
        for j in range(0, N, 1):
            j = appy.vidx(j, appy.MVL, N)
            ey[0, j] = fict[t]
        # _yee_steps_kernel1
        #pragma parallel for simd
        for i in range(1, M, 1):
            i = appy.vidx(i, appy.ROW_BLOCK, M)
            #pragma parallel for simd
            for j in range(0, N, 1):
                j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, N)
                ey[i, j] = ey[i, j] - 0.5 * (hz[i, j] - hz[i - 1, j])
        # _yee_steps_kernel2
        #pragma parallel for simd
        for i in range(0, M, 1):
            i = appy.vidx(i, appy.ROW_BLOCK, M)
            #pragma parallel for simd
            for j in range(1, N, 1):
                j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, N)
                ex[i, j] = ex[i, j] - 0.5 * (hz[i, j] - hz[i, j - 1])
        # _yee_steps_kernel3
        #pragma parallel for simd
        for i in range(0, M - 1, 1):
            i = appy.vidx(i, appy.ROW_BLOCK, M - 1)
            #pragma parallel for simd
            for j in range(0, N - 1, 1):
                j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, N - 1)
                hz[i, j] = hz[i, j] - 0.7 * (ex[i, j + 1] - ex[i, j] + ey[i + 1, j] - ey[i, j])


def host_code_in_loop(A, N, T):
    for t in range(T):
        scale = 1.0 / (t + 1)
        # _host_code_in_loop_kernel0
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            A[i] = A[i] * scale + 1.0
