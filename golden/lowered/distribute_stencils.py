# appyc 0.1.0 --emit lowered: samples/distribute_stencils.py after the high-level passes (assembly APPy).
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
        # _smooth_copy_back_kernel0
        #pragma parallel for simd
        for _p0 in range(2, M - 2, 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, M - 2)
            #pragma parallel for simd
            for _p1 in range(1, N - 1, 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, N - 1)
                B[_p0, _p1] = 0.25 * (A[_p0 + 2, _p1] + A[_p0 - 2, _p1]) + 0.5 * A[_p0, _p1 - 1]
        # _smooth_copy_back_kernel1
        #pragma parallel for simd
        for _p0 in range(2, M - 2, 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, M - 2)
            #pragma parallel for simd
            for _p1 in range(1, N - 1, 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, N - 1)
                A[_p0, _p1] = B[_p0, _p1]


def jacobi_1d(A, B, N, T):
    #pragma distribute(A, B)
    for t in range(T):
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


def relax_counted(A, B, N, T):
    # Host scalars in a distributed loop: a weight the loop recomputes each step (a register
    # the sweeps read) and a count of sweeps the function returns.
    sweeps = 0
    #pragma distribute(A, B)
    for t in range(T):
        w = 0.25 + 0.125 * (t % 2)
        # _relax_counted_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            B[i] = A[i] + w * (A[i - 1] - 2.0 * A[i] + A[i + 1])
        # _relax_counted_kernel1
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            A[i] = B[i] + w * (B[i - 1] - 2.0 * B[i] + B[i + 1])
        sweeps = sweeps + 2
    return sweeps


def heat_3d(A, B, L, M, N, T):
    #pragma distribute(A, B)
    for t in range(T):
        # _heat_3d_kernel0
        #pragma parallel for
        for _p0 in range(1, L - 1, 1):
            #pragma parallel for simd
            for _p1 in range(1, M - 1, 1):
                _p1 = appy.vidx(_p1, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for _p2 in range(1, N - 1, 1):
                    _p2 = appy.vidx(_p2, appy.MVL // appy.ROW_BLOCK, N - 1)
                    B[_p0, _p1, _p2] = 0.125 * (A[_p0 + 1, _p1, _p2] - 2.0 * A[_p0, _p1, _p2] + A[_p0 - 1, _p1, _p2]) + 0.125 * (A[_p0, _p1 + 1, _p2] - 2.0 * A[_p0, _p1, _p2] + A[_p0, _p1 - 1, _p2]) + A[_p0, _p1, _p2]
        # _heat_3d_kernel1
        #pragma parallel for
        for _p0 in range(1, L - 1, 1):
            #pragma parallel for simd
            for _p1 in range(1, M - 1, 1):
                _p1 = appy.vidx(_p1, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for _p2 in range(1, N - 1, 1):
                    _p2 = appy.vidx(_p2, appy.MVL // appy.ROW_BLOCK, N - 1)
                    A[_p0, _p1, _p2] = 0.125 * (B[_p0 + 1, _p1, _p2] - 2.0 * B[_p0, _p1, _p2] + B[_p0 - 1, _p1, _p2]) + 0.125 * (B[_p0, _p1 + 1, _p2] - 2.0 * B[_p0, _p1, _p2] + B[_p0, _p1 - 1, _p2]) + B[_p0, _p1, _p2]


def three_sweeps(A, B, C, N, T):
    # A is read by the first and third sweeps and written by the second: it is exchanged once,
    # before the third, and the next iteration's first sweep acknowledges reading its halo.
    #pragma distribute(A, B, C)
    for t in range(T):
        # _three_sweeps_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            B[i] = 0.5 * (A[i - 1] + A[i + 1])
        # _three_sweeps_kernel1
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            A[i] = 0.75 * B[i] + 0.25 * C[i]
        # _three_sweeps_kernel2
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            C[i] = A[i + 1] - 0.5 * C[i]
