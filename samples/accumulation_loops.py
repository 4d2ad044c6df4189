"""Accumulation loops written the way APPy users write them: a host loop whose iterations only
add into one array, each gathered into one region (passes/gather.rs).

Exercises: symm's scatter into the rows above (`C[k, j] += ...` for `k < i`) with a private
sum carried by a temporary row to a bare row update (and again with the row's allocation sharing
a line with another statement, which keeps the line); a triangular product whose `parallel for`
starts below the loop's row (`range(k + 1, n)`); syrk's rank-1 updates of a lower triangle; a
triangle whose sums start at the column (`C[j, k]`, `k <= v`); a column sum into a vector; and
a loop that reads what it accumulates (a prefix over rows), which stays a loop of regions.
"""
import numpy as np


def symm_natural(alpha, beta, C, A, B):
    # symm (PolyBench) with the row loop on the host: row i scatters into the rows above it
    # and sums the column above it for its own row.
    temp2 = np.empty((C.shape[1],), dtype=C.dtype)
    C *= beta
    for i in range(C.shape[0]):
        #pragma parallel for
        for j in range(C.shape[1]):
            acc = 0.0
            #pragma simd
            for k in range(i):
                C[k, j] += alpha * B[i, j] * A[i, k]
                acc += B[k, j] * A[i, k]
            temp2[j] = acc
        C[i, :] += alpha * B[i, :] * A[i, i] + alpha * temp2
    return C


def symm_shared_line(alpha, beta, C, A, B):
    # symm_natural with its row allocated on the line that doubles alpha: gather keeps the row
    # in registers, yet the line stays (passes/dead_allocations.rs), for its other statement.
    temp2 = np.empty((C.shape[1],), dtype=C.dtype); alpha = 2.0 * alpha
    C *= beta
    for i in range(C.shape[0]):
        #pragma parallel for
        for j in range(C.shape[1]):
            acc = 0.0
            #pragma simd
            for k in range(i):
                C[k, j] += alpha * B[i, j] * A[i, k]
                acc += B[k, j] * A[i, k]
            temp2[j] = acc
        C[i, :] += alpha * B[i, :] * A[i, i] + alpha * temp2
    return C


def lower_product(L, B, C):
    # C += (strictly lower part of L) @ B, one column k of L a step.
    for k in range(C.shape[0]):
        #pragma parallel for
        for i in range(k + 1, C.shape[0]):
            #pragma simd
            for j in range(C.shape[1]):
                C[i, j] += L[i, k] * B[k, j]


def syrk_steps(alpha, C, A):
    # C's lower triangle += alpha * A A^T, one column of A a step.
    for k in range(A.shape[1]):
        #pragma parallel for
        for i in range(C.shape[0]):
            #pragma simd
            for j in range(i + 1):
                C[i, j] += alpha * A[i, k] * A[j, k]


def column_triangle(L, B, C):
    # C[j, k] += the sum over v >= k of L[v, k] * B[v, j]: each column's sum starts at the
    # column, so the columns cannot be vector lanes (one program an element).
    for v in range(L.shape[0]):
        #pragma parallel for
        for j in range(C.shape[0]):
            #pragma simd
            for k in range(v + 1):
                C[j, k] += L[v, k] * B[v, j]


def column_sums(A, y, x):
    # x += A^T y, one row of A a step.
    for i in range(A.shape[0]):
        #pragma parallel for simd
        for j in range(A.shape[1]):
            x[j] += A[i, j] * y[i]


def prefix_rows(C):
    # Each row adds the one above it, as updated: the iterations do not commute.
    for i in range(1, C.shape[0]):
        #pragma parallel for simd
        for j in range(C.shape[1]):
            C[i, j] += C[i - 1, j]
