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
        #pragma parallel for
        for i in range(1, L - 1):
            #pragma parallel for
            for j in range(1, M - 1):
                #pragma simd
                for k in range(1, N - 1):
                    B[i, j, k] = (0.125 * (A[i + 1, j, k] - 2.0 * A[i, j, k] + A[i - 1, j, k])
                                  + 0.125 * (A[i, j + 1, k] - 2.0 * A[i, j, k] + A[i, j - 1, k])
                                  + 0.125 * (A[i, j, k + 1] - 2.0 * A[i, j, k] + A[i, j, k - 1])
                                  + A[i, j, k])
        #pragma parallel for
        for i in range(1, L - 1):
            #pragma parallel for
            for j in range(1, M - 1):
                #pragma simd
                for k in range(1, N - 1):
                    A[i, j, k] = (0.125 * (B[i + 1, j, k] - 2.0 * B[i, j, k] + B[i - 1, j, k])
                                  + 0.125 * (B[i, j + 1, k] - 2.0 * B[i, j, k] + B[i, j - 1, k])
                                  + 0.125 * (B[i, j, k + 1] - 2.0 * B[i, j, k] + B[i, j, k - 1])
                                  + B[i, j, k])


def heat_slices(A, B, L, M, N, T):
    for t in range(T):
        #pragma 1:L-1=>parallel 1:M-1=>parallel 1:N-1=>simd
        B[1:L-1, 1:M-1, 1:N-1] = (0.125 * (A[2:L, 1:M-1, 1:N-1] - 2.0 * A[1:L-1, 1:M-1, 1:N-1] + A[0:L-2, 1:M-1, 1:N-1])
                                  + 0.125 * (A[1:L-1, 2:M, 1:N-1] - 2.0 * A[1:L-1, 1:M-1, 1:N-1] + A[1:L-1, 0:M-2, 1:N-1])
                                  + 0.125 * (A[1:L-1, 1:M-1, 2:N] - 2.0 * A[1:L-1, 1:M-1, 1:N-1] + A[1:L-1, 1:M-1, 0:N-2])
                                  + A[1:L-1, 1:M-1, 1:N-1])
        #pragma 1:L-1=>parallel 1:M-1=>parallel 1:N-1=>simd
        A[1:L-1, 1:M-1, 1:N-1] = (0.125 * (B[2:L, 1:M-1, 1:N-1] - 2.0 * B[1:L-1, 1:M-1, 1:N-1] + B[0:L-2, 1:M-1, 1:N-1])
                                  + 0.125 * (B[1:L-1, 2:M, 1:N-1] - 2.0 * B[1:L-1, 1:M-1, 1:N-1] + B[1:L-1, 0:M-2, 1:N-1])
                                  + 0.125 * (B[1:L-1, 1:M-1, 2:N] - 2.0 * B[1:L-1, 1:M-1, 1:N-1] + B[1:L-1, 1:M-1, 0:N-2])
                                  + B[1:L-1, 1:M-1, 1:N-1])


def plane_diagonals(A, B, L, M, N, T):
    # In-plane diagonal neighbours; B's box starts at plane 2 and row 2, A's at 1.
    for t in range(T):
        #pragma parallel for
        for i in range(2, L - 1):
            #pragma parallel for
            for j in range(2, M - 1):
                #pragma simd
                for k in range(1, N - 1):
                    B[i, j, k] = (0.1 * (A[i, j - 1, k - 1] + A[i, j - 1, k + 1] + A[i, j + 1, k - 1]
                                         + A[i, j + 1, k + 1] + A[i - 1, j, k] + A[i + 1, j, k])
                                  + 0.4 * A[i, j, k])
        #pragma parallel for
        for i in range(1, L - 1):
            #pragma parallel for
            for j in range(1, M - 1):
                #pragma simd
                for k in range(1, N - 1):
                    A[i, j, k] = 0.25 * (B[i, j, k - 1] + B[i, j + 1, k]) + 0.5 * B[i, j, k]


def upwind(A, B, c, L, M, N, T):
    # One-sided differences; the boxes leave the first plane, row and column.
    for t in range(T):
        #pragma parallel for
        for i in range(1, L):
            #pragma parallel for
            for j in range(1, M):
                #pragma simd
                for k in range(1, N):
                    B[i, j, k] = A[i, j, k] - c * (3.0 * A[i, j, k] - A[i - 1, j, k] - A[i, j - 1, k] - A[i, j, k - 1])
        #pragma parallel for
        for i in range(1, L):
            #pragma parallel for
            for j in range(1, M):
                #pragma simd
                for k in range(1, N):
                    A[i, j, k] = B[i, j, k] - c * (3.0 * B[i, j, k] - B[i - 1, j, k] - B[i, j - 1, k] - B[i, j, k - 1])


def plane_shear(A, B, L, M, N, T):
    # Reads the plane above at (j + 1, k): refused, the plain persistent kernel runs it.
    for t in range(T):
        #pragma parallel for
        for i in range(1, L - 1):
            #pragma parallel for
            for j in range(1, M - 1):
                #pragma simd
                for k in range(1, N - 1):
                    B[i, j, k] = 0.5 * (A[i, j, k] + A[i + 1, j + 1, k])
        #pragma parallel for
        for i in range(1, L - 1):
            #pragma parallel for
            for j in range(1, M - 1):
                #pragma simd
                for k in range(1, N - 1):
                    A[i, j, k] = 0.5 * (B[i, j, k] + B[i - 1, j, k])


def three_phases(A, B, C, L, M, N, T):
    # Three arrays in a cycle: refused (the streamed kernel runs iterations of two phases).
    for t in range(T):
        #pragma parallel for
        for i in range(1, L - 1):
            #pragma parallel for
            for j in range(1, M - 1):
                #pragma simd
                for k in range(1, N - 1):
                    B[i, j, k] = 0.5 * (A[i - 1, j, k] + A[i + 1, j, k])
        #pragma parallel for
        for i in range(1, L - 1):
            #pragma parallel for
            for j in range(1, M - 1):
                #pragma simd
                for k in range(1, N - 1):
                    C[i, j, k] = 0.5 * (B[i, j - 1, k] + B[i, j + 1, k])
        #pragma parallel for
        for i in range(1, L - 1):
            #pragma parallel for
            for j in range(1, M - 1):
                #pragma simd
                for k in range(1, N - 1):
                    A[i, j, k] = 0.5 * (C[i, j, k - 1] + C[i, j, k + 1])


def heat_swap(A, B, T):
    # One stencil a step and a swap; the boundary faces copied each step (run once, blocked).
    L, M, N = A.shape
    for t in range(T):
        #pragma parallel for
        for i in range(1, L - 1):
            #pragma parallel for
            for j in range(1, M - 1):
                #pragma simd
                for k in range(1, N - 1):
                    B[i, j, k] = A[i, j, k] + 0.1 * (A[i - 1, j, k] + A[i + 1, j, k] + A[i, j - 1, k]
                                                     + A[i, j + 1, k] + A[i, j, k - 1] + A[i, j, k + 1]
                                                     - 6.0 * A[i, j, k])
        B[0, :, :] = A[0, :, :]
        B[L - 1, :, :] = A[L - 1, :, :]
        B[:, 0, :] = A[:, 0, :]
        B[:, M - 1, :] = A[:, M - 1, :]
        B[:, :, 0] = A[:, :, 0]
        B[:, :, N - 1] = A[:, :, N - 1]
        A, B = B, A
    return A


def heat_swap_bare(A, B, T):
    # The swap without copies: each array keeps its own boundary.
    L, M, N = A.shape
    for t in range(T):
        #pragma parallel for
        for i in range(1, L - 1):
            #pragma parallel for
            for j in range(1, M - 1):
                #pragma simd
                for k in range(1, N - 1):
                    B[i, j, k] = 0.5 * A[i, j, k] + 0.25 * (A[i - 1, j, k] + A[i, j, k + 1])
        A, B = B, A
    return A, B
