"""Reductions over each axis, the whole array, and by method.

Exercises: `np.sum(..., axis=1)`, `np.max(..., axis=0)`, a full reduction, row-wise vector dot products
`A[i, :N] @ B[i, :N]`, `.min()` on a row inside a parallel loop, and `reduce(op)` properties checked against
the statement.
"""
import numpy as np


def row_sums(A, r, M, N):
    #pragma :M=>parallel :N=>reduce(sum)
    r[:M] = np.sum(A[:M, :N], axis=1)


def col_max(A, c, M, N):
    #pragma :N=>parallel :M=>reduce(max)
    c[:N] = np.max(A[:M, :N], axis=0)


def total(A, s, M, N):
    #pragma :M=>reduce(sum) :N=>reduce(sum)
    s[0] = np.sum(A[:M, :N])


def row_dots(A, B, out, M, N):
    #pragma parallel for
    for i in range(M):
        #pragma :N=>simd(64)
        out[i] = A[i, :N] @ B[i, :N]


def row_min(A, r, M, N):
    #pragma parallel for
    for i in range(M):
        r[i] = A[i, :N].min()


def leaky_rows(A, B, M, N, slope):
    #pragma :M=>parallel :N=>simd(64)
    B[:M, :N] = np.where(A[:M, :N] > 0.0, A[:M, :N], slope * A[:M, :N])


def col_means(A, m, M):
    # Full slices `:` name dimensions too; the column dimension of A is m's.
    #pragma :=>parallel :M=>reduce(sum)
    m[:] = np.sum(A[:M, :], axis=0) / M


def add_full(A, B):
    #pragma :=>parallel :=>simd
    B[:, :] = A[:, :] + 1.0
