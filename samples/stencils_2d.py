"""2-D stencil time loops that run temporally blocked (schedule/temporal.rs, Stencil2d):
overlapped tiles of the state array, several iterations a launch (codegen/triton/gluon2d.rs).

Exercises: the loop spelling (`parallel for` + `simd`) and the tensor spelling (slices) of
Jacobi-2D, a 9-point stencil (diagonal offsets: two guard rows), a one-sided (upwind) stencil
with a host scalar, a loop the analysis refuses (an offset of 2), one whose phases do not
alternate two arrays, and the swap spellings: one stencil a step and `A, B = B, A`, with
boundary copies (blocked: the copies run once) and with a copy into the stencil's own rows
(refused: it overwrites what the stencil wrote).
"""
import numpy as np


def jacobi_loops(A, B, M, N, T):
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + B[i + 1, j] + B[i - 1, j])


def jacobi_slices(A, B, M, N, T):
    for t in range(T):
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        B[1:M-1, 1:N-1] = 0.2 * (A[1:M-1, 1:N-1] + A[1:M-1, 0:N-2] + A[1:M-1, 2:N]
                                 + A[2:M, 1:N-1] + A[0:M-2, 1:N-1])
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        A[1:M-1, 1:N-1] = 0.2 * (B[1:M-1, 1:N-1] + B[1:M-1, 0:N-2] + B[1:M-1, 2:N]
                                 + B[2:M, 1:N-1] + B[0:M-2, 1:N-1])


def nine_point(A, B, M, N, T):
    # Diagonal neighbours; B's rectangle starts at row 2 (rows 0-1 never written).
    for t in range(T):
        #pragma parallel for
        for i in range(2, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                B[i, j] = 0.125 * (A[i - 1, j - 1] + A[i - 1, j] + A[i - 1, j + 1] + A[i, j - 1]
                                   + A[i, j + 1] + A[i + 1, j - 1] + A[i + 1, j] + A[i + 1, j + 1]) - 0.5 * A[i, j]
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                A[i, j] = 0.25 * (B[i - 1, j - 1] + B[i + 1, j + 1]) + 0.5 * B[i, j]


def upwind(A, B, c, M, N, T):
    # One-sided differences; the rectangles leave the first row and column.
    for t in range(T):
        #pragma parallel for
        for i in range(1, M):
            #pragma simd
            for j in range(1, N):
                B[i, j] = A[i, j] - c * (A[i, j] - A[i - 1, j]) - c * (A[i, j] - A[i, j - 1])
        #pragma parallel for
        for i in range(1, M):
            #pragma simd
            for j in range(1, N):
                A[i, j] = B[i, j] - c * (B[i, j] - B[i - 1, j]) / 2.0


def wide(A, B, M, N, T):
    # Reads two columns away: not blocked (the plain persistent kernel runs).
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(2, N - 2):
                B[i, j] = 0.5 * (A[i, j - 2] + A[i, j + 2])
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(2, N - 2):
                A[i, j] = 0.5 * (B[i - 1, j] + B[i + 1, j])


def three_arrays(A, B, C, M, N, T):
    # C from A, then A from C and B: phase 1 reads two arrays, so not blocked.
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                C[i, j] = 0.5 * (A[i - 1, j] + A[i + 1, j])
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                A[i, j] = C[i, j] + B[i, j]


def smooth_swap(A, B, M, N, T):
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        B[0, :] = A[0, :]
        B[M - 1, :] = A[M - 1, :]
        B[:, 0] = A[:, 0]
        B[:, N - 1] = A[:, N - 1]
        A, B = B, A
    return A


def swap_no_copies(A, B, M, N, T):
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        A, B = B, A
    return A, B


def swap_copy_inside(A, B, M, N, T):
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        B[1, :] = A[1, :]
        A, B = B, A
    return A
