"""Sparse matrix-vector product in CSR form (paper Listing 4).

Exercises: `#pragma simd` / `#pragma simd(N)` on an inner loop with dynamic bounds read from an
array (`range(A_row[i], A_row[i + 1])`), a gather `x[A_col[j]]`, a reduction into memory
(`y[i] += ...`) and a scalar accumulator (`acc = 0.0; acc += ...; y[i] = acc`), rows without any
nonzero, and a parallel loop bound given by an expression (`N - 1`).
"""
import numpy as np


def spmv(A_row, A_col, A_val, x, y, N):
    # N is len(A_row): there are N - 1 rows.
    #pragma parallel for
    for i in range(N - 1):
        y[i] = 0.0
        #pragma simd
        for j in range(A_row[i], A_row[1 + i]):
            col = A_col[j]
            y[i] += A_val[j] * x[col]


def spmv_acc(indptr, indices, data, x, y, M):
    #pragma parallel for
    for i in range(M):
        acc = 0.0
        #pragma simd(32)
        for j in range(indptr[i], indptr[i + 1]):
            acc += data[j] * x[indices[j]]
        y[i] = acc
