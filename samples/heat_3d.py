"""A 3-D heat stencil (NPBench heat_3d), one step in each direction.

Exercises: a 3-D tensor statement with three dimension pragmas (two `parallel` grid
dimensions and a `simd` one), shifted slices in every dimension, and open bounds (`1:-1`).
"""
import numpy as np


def heat_3d(A, B, L, M, N):
    #pragma 1:L-1=>parallel 1:M-1=>parallel 1:N-1=>simd
    B[1:L-1, 1:M-1, 1:N-1] = (0.125 * (A[2:L, 1:M-1, 1:N-1] - 2.0 * A[1:L-1, 1:M-1, 1:N-1] + A[0:L-2, 1:M-1, 1:N-1])
                              + 0.125 * (A[1:L-1, 2:M, 1:N-1] - 2.0 * A[1:L-1, 1:M-1, 1:N-1] + A[1:L-1, 0:M-2, 1:N-1])
                              + 0.125 * (A[1:L-1, 1:M-1, 2:N] - 2.0 * A[1:L-1, 1:M-1, 1:N-1] + A[1:L-1, 1:M-1, 0:N-2])
                              + A[1:L-1, 1:M-1, 1:N-1])


def laplace_open_bounds(A, B):
    #pragma 1:-1=>parallel 1:-1=>simd
    B[1:-1, 1:-1] = A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] - 4.0 * A[1:-1, 1:-1]


def heat_3d_tiles(A, B, L, M, N):
    # Each worker takes one plane and sweeps it in 2-D tiles of 4 x 64.
    #pragma 1:L-1=>parallel 1:M-1=>simd(4) 1:N-1=>simd(64)
    B[1:L-1, 1:M-1, 1:N-1] = (0.125 * (A[2:L, 1:M-1, 1:N-1] - 2.0 * A[1:L-1, 1:M-1, 1:N-1] + A[0:L-2, 1:M-1, 1:N-1])
                              + 0.125 * (A[1:L-1, 2:M, 1:N-1] - 2.0 * A[1:L-1, 1:M-1, 1:N-1] + A[1:L-1, 0:M-2, 1:N-1])
                              + 0.125 * (A[1:L-1, 1:M-1, 2:N] - 2.0 * A[1:L-1, 1:M-1, 1:N-1] + A[1:L-1, 1:M-1, 0:N-2])
                              + A[1:L-1, 1:M-1, 1:N-1])
