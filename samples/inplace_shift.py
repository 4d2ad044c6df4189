"""Self-dependent in-place updates (paper Figure 2): the target is read at a shifted slice.

Exercises: temporary arrays (Alg. 5) inside a parallel loop and at function level, and the
proofs that skip them: every read of the target at the written element, or lane-aligned with it
(another row, same columns), and single elements read into scalars before the statement.
"""
import numpy as np


def smooth_rows(A, M, N):
    #pragma parallel for
    for i in range(M):
        A[i, 1:N] = 0.5 * (A[i, :N-1] + A[i, 1:N])


def smooth_vector(x, N):
    #pragma 1:N=>simd
    x[1:N] = 0.5 * (x[:N-1] + x[1:N])


def scale_in_place(A, M, N, s):
    #pragma :M=>parallel :N=>simd
    A[:M, :N] = A[:M, :N] * s + 1.0


def subtract_pivot(A, M, N, p):
    # NumPy reads A[i, p] before any store, though the strip holding column p overwrites it:
    # the one element is read into a scalar first (no temporary array needed).
    #pragma parallel for
    for i in range(M):
        A[i, :N] = A[i, :N] - A[i, p]


def relax_rows(path, N):
    # Floyd-Warshall: row i reads row k while row i is written. Within a worker every lane reads
    # only its own column of row k, so no temporary is needed; row k itself does not change in
    # round k when the diagonal is non-negative (what makes the parallel loop race-free).
    for k in range(N):
        #pragma parallel for
        for i in range(N):
            path[i, :N] = np.minimum(path[i, :N], path[i, k] + path[k, :N])
