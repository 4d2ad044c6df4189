# appyc 0.1.0 --emit lowered: samples/stencils_3d.py after the high-level passes (assembly APPy).
"""3-D stencil time loops that run temporally blocked (schedule/temporal.rs, Stencil3d): planes
streamed along the first axis, one iteration of two phases a group, tiles of the other two axes
overlapping by the phases' reach (codegen/triton/gluon3d.rs).

Exercises: the loop spelling (two `parallel for` + `simd`) and the tensor spelling (slices) of
Heat-3D on boxes of any shape, a stencil with diagonal neighbours within a plane (two guard
rows) and boxes that differ per array, a one-sided (upwind) stencil with a host scalar, the swap
spelling (one stencil a step and `A, B = B, A`, with its boundary faces copied by bare lines
and without), and two loops the analysis refuses: a neighbour plane read away from `(j, k)`
(the streamed kernel holds only its centre) and three phases an iteration.
"""
import numpy as np


def heat_loops(A, B, T):
    L, M, N = A.shape
    for t in range(T):
        # _heat_loops_kernel0
        #pragma parallel for
        for i in range(1, L - 1, 1):
            #pragma parallel for simd
            for j in range(1, M - 1, 1):
                j = appy.vidx(j, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for k in range(1, N - 1, 1):
                    k = appy.vidx(k, appy.MVL // appy.ROW_BLOCK, N - 1)
                    B[i, j, k] = 0.125 * (A[i + 1, j, k] - 2.0 * A[i, j, k] + A[i - 1, j, k]) + 0.125 * (A[i, j + 1, k] - 2.0 * A[i, j, k] + A[i, j - 1, k]) + 0.125 * (A[i, j, k + 1] - 2.0 * A[i, j, k] + A[i, j, k - 1]) + A[i, j, k]
        # _heat_loops_kernel1
        #pragma parallel for
        for i in range(1, L - 1, 1):
            #pragma parallel for simd
            for j in range(1, M - 1, 1):
                j = appy.vidx(j, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for k in range(1, N - 1, 1):
                    k = appy.vidx(k, appy.MVL // appy.ROW_BLOCK, N - 1)
                    A[i, j, k] = 0.125 * (B[i + 1, j, k] - 2.0 * B[i, j, k] + B[i - 1, j, k]) + 0.125 * (B[i, j + 1, k] - 2.0 * B[i, j, k] + B[i, j - 1, k]) + 0.125 * (B[i, j, k + 1] - 2.0 * B[i, j, k] + B[i, j, k - 1]) + B[i, j, k]


def heat_slices(A, B, L, M, N, T):
    for t in range(T):
        # _heat_slices_kernel0
        #pragma parallel for
        for _p0 in range(1, L - 1, 1):
            #pragma parallel for simd
            for _p1 in range(1, M - 1, 1):
                _p1 = appy.vidx(_p1, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for _i in range(1, N - 1, 1):
                    _i = appy.vidx(_i, appy.MVL // appy.ROW_BLOCK, N - 1)
                    B[_p0, _p1, _i] = 0.125 * (A[_p0 + 1, _p1, _i] - 2.0 * A[_p0, _p1, _i] + A[_p0 - 1, _p1, _i]) + 0.125 * (A[_p0, _p1 + 1, _i] - 2.0 * A[_p0, _p1, _i] + A[_p0, _p1 - 1, _i]) + 0.125 * (A[_p0, _p1, _i + 1] - 2.0 * A[_p0, _p1, _i] + A[_p0, _p1, _i - 1]) + A[_p0, _p1, _i]
        # _heat_slices_kernel1
        #pragma parallel for
        for _p0 in range(1, L - 1, 1):
            #pragma parallel for simd
            for _p1 in range(1, M - 1, 1):
                _p1 = appy.vidx(_p1, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for _i in range(1, N - 1, 1):
                    _i = appy.vidx(_i, appy.MVL // appy.ROW_BLOCK, N - 1)
                    A[_p0, _p1, _i] = 0.125 * (B[_p0 + 1, _p1, _i] - 2.0 * B[_p0, _p1, _i] + B[_p0 - 1, _p1, _i]) + 0.125 * (B[_p0, _p1 + 1, _i] - 2.0 * B[_p0, _p1, _i] + B[_p0, _p1 - 1, _i]) + 0.125 * (B[_p0, _p1, _i + 1] - 2.0 * B[_p0, _p1, _i] + B[_p0, _p1, _i - 1]) + B[_p0, _p1, _i]


def plane_diagonals(A, B, L, M, N, T):
    # In-plane diagonal neighbours; B's box starts at plane 2 and row 2, A's at 1.
    for t in range(T):
        # _plane_diagonals_kernel0
        #pragma parallel for
        for i in range(2, L - 1, 1):
            #pragma parallel for simd
            for j in range(2, M - 1, 1):
                j = appy.vidx(j, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for k in range(1, N - 1, 1):
                    k = appy.vidx(k, appy.MVL // appy.ROW_BLOCK, N - 1)
                    B[i, j, k] = 0.1 * (A[i, j - 1, k - 1] + A[i, j - 1, k + 1] + A[i, j + 1, k - 1] + A[i, j + 1, k + 1] + A[i - 1, j, k] + A[i + 1, j, k]) + 0.4 * A[i, j, k]
        # _plane_diagonals_kernel1
        #pragma parallel for
        for i in range(1, L - 1, 1):
            #pragma parallel for simd
            for j in range(1, M - 1, 1):
                j = appy.vidx(j, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for k in range(1, N - 1, 1):
                    k = appy.vidx(k, appy.MVL // appy.ROW_BLOCK, N - 1)
                    A[i, j, k] = 0.25 * (B[i, j, k - 1] + B[i, j + 1, k]) + 0.5 * B[i, j, k]


def upwind(A, B, c, L, M, N, T):
    # One-sided differences; the boxes leave the first plane, row and column.
    for t in range(T):
        # _upwind_kernel0
        #pragma parallel for
        for i in range(1, L, 1):
            #pragma parallel for simd
            for j in range(1, M, 1):
                j = appy.vidx(j, appy.ROW_BLOCK, M)
                #pragma parallel for simd
                for k in range(1, N, 1):
                    k = appy.vidx(k, appy.MVL // appy.ROW_BLOCK, N)
                    B[i, j, k] = A[i, j, k] - c * (3.0 * A[i, j, k] - A[i - 1, j, k] - A[i, j - 1, k] - A[i, j, k - 1])
        # _upwind_kernel1
        #pragma parallel for
        for i in range(1, L, 1):
            #pragma parallel for simd
            for j in range(1, M, 1):
                j = appy.vidx(j, appy.ROW_BLOCK, M)
                #pragma parallel for simd
                for k in range(1, N, 1):
                    k = appy.vidx(k, appy.MVL // appy.ROW_BLOCK, N)
                    A[i, j, k] = B[i, j, k] - c * (3.0 * B[i, j, k] - B[i - 1, j, k] - B[i, j - 1, k] - B[i, j, k - 1])


def plane_shear(A, B, L, M, N, T):
    # Reads the plane above at (j + 1, k): refused, the plain persistent kernel runs it.
    for t in range(T):
        # _plane_shear_kernel0
        #pragma parallel for
        for i in range(1, L - 1, 1):
            #pragma parallel for simd
            for j in range(1, M - 1, 1):
                j = appy.vidx(j, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for k in range(1, N - 1, 1):
                    k = appy.vidx(k, appy.MVL // appy.ROW_BLOCK, N - 1)
                    B[i, j, k] = 0.5 * (A[i, j, k] + A[i + 1, j + 1, k])
        # _plane_shear_kernel1
        #pragma parallel for
        for i in range(1, L - 1, 1):
            #pragma parallel for simd
            for j in range(1, M - 1, 1):
                j = appy.vidx(j, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for k in range(1, N - 1, 1):
                    k = appy.vidx(k, appy.MVL // appy.ROW_BLOCK, N - 1)
                    A[i, j, k] = 0.5 * (B[i, j, k] + B[i - 1, j, k])


def three_phases(A, B, C, L, M, N, T):
    # Three arrays in a cycle: refused (the streamed kernel runs iterations of two phases).
    for t in range(T):
        # _three_phases_kernel0
        #pragma parallel for
        for i in range(1, L - 1, 1):
            #pragma parallel for simd
            for j in range(1, M - 1, 1):
                j = appy.vidx(j, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for k in range(1, N - 1, 1):
                    k = appy.vidx(k, appy.MVL // appy.ROW_BLOCK, N - 1)
                    B[i, j, k] = 0.5 * (A[i - 1, j, k] + A[i + 1, j, k])
        # _three_phases_kernel1
        #pragma parallel for
        for i in range(1, L - 1, 1):
            #pragma parallel for simd
            for j in range(1, M - 1, 1):
                j = appy.vidx(j, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for k in range(1, N - 1, 1):
                    k = appy.vidx(k, appy.MVL // appy.ROW_BLOCK, N - 1)
                    C[i, j, k] = 0.5 * (B[i, j - 1, k] + B[i, j + 1, k])
        # _three_phases_kernel2
        #pragma parallel for
        for i in range(1, L - 1, 1):
            #pragma parallel for simd
            for j in range(1, M - 1, 1):
                j = appy.vidx(j, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for k in range(1, N - 1, 1):
                    k = appy.vidx(k, appy.MVL // appy.ROW_BLOCK, N - 1)
                    A[i, j, k] = 0.5 * (C[i, j, k - 1] + C[i, j, k + 1])


def heat_swap(A, B, T):
    # One stencil a step and a swap; the boundary faces copied each step (run once, blocked).
    L, M, N = A.shape
    for t in range(T):
        # _heat_swap_kernel0
        #pragma parallel for
        for i in range(1, L - 1, 1):
            #pragma parallel for simd
            for j in range(1, M - 1, 1):
                j = appy.vidx(j, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for k in range(1, N - 1, 1):
                    k = appy.vidx(k, appy.MVL // appy.ROW_BLOCK, N - 1)
                    B[i, j, k] = A[i, j, k] + 0.1 * (A[i - 1, j, k] + A[i + 1, j, k] + A[i, j - 1, k] + A[i, j + 1, k] + A[i, j, k - 1] + A[i, j, k + 1] - 6.0 * A[i, j, k])
        # _heat_swap_kernel1
        #pragma parallel for simd
        for _p0 in range(0, B.shape[1], 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, B.shape[1])
            #pragma parallel for simd
            for _p1 in range(0, B.shape[2], 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, B.shape[2])
                B[0, _p0, _p1] = A[0, _p0, _p1]
        # _heat_swap_kernel2
        #pragma parallel for simd
        for _p0 in range(0, B.shape[1], 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, B.shape[1])
            #pragma parallel for simd
            for _p1 in range(0, B.shape[2], 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, B.shape[2])
                B[L - 1, _p0, _p1] = A[L - 1, _p0, _p1]
        # _heat_swap_kernel3
        #pragma parallel for simd
        for _p0 in range(0, B.shape[0], 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, B.shape[0])
            #pragma parallel for simd
            for _p1 in range(0, B.shape[2], 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, B.shape[2])
                B[_p0, 0, _p1] = A[_p0, 0, _p1]
        # _heat_swap_kernel4
        #pragma parallel for simd
        for _p0 in range(0, B.shape[0], 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, B.shape[0])
            #pragma parallel for simd
            for _p1 in range(0, B.shape[2], 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, B.shape[2])
                B[_p0, M - 1, _p1] = A[_p0, M - 1, _p1]
        # _heat_swap_kernel5
        #pragma parallel for simd
        for _p0 in range(0, B.shape[0], 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, B.shape[0])
            #pragma parallel for simd
            for _p1 in range(0, B.shape[1], 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, B.shape[1])
                B[_p0, _p1, 0] = A[_p0, _p1, 0]
        # _heat_swap_kernel6
        #pragma parallel for simd
        for _p0 in range(0, B.shape[0], 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, B.shape[0])
            #pragma parallel for simd
            for _p1 in range(0, B.shape[1], 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, B.shape[1])
                B[_p0, _p1, N - 1] = A[_p0, _p1, N - 1]
        A, B = B, A
    return A


def heat_swap_bare(A, B, T):
    # The swap without copies: each array keeps its own boundary.
    L, M, N = A.shape
    for t in range(T):
        # _heat_swap_bare_kernel0
        #pragma parallel for
        for i in range(1, L - 1, 1):
            #pragma parallel for simd
            for j in range(1, M - 1, 1):
                j = appy.vidx(j, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for k in range(1, N - 1, 1):
                    k = appy.vidx(k, appy.MVL // appy.ROW_BLOCK, N - 1)
                    B[i, j, k] = 0.5 * A[i, j, k] + 0.25 * (A[i - 1, j, k] + A[i, j, k + 1])
        A, B = B, A
    return A, B
