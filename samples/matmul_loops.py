"""Matmul-shaped loop nests as APPy users write them (NPBench's gemm, trmm, symm, syr2k,
covariance): a parallel `i`, a `j` loop, a sum over `k` of a product of an `(i, k)` factor and a
`(k, j)` factor. appyc computes each as 2-D output tiles with `tl.dot` when the arrays share a
floating dtype, and falls back to one program per row otherwise.

Exercises: both loop shapes (a scalar accumulator; rank-1 updates after a prologue), triangular
bounds on `j` (`range(i + 1)`, `range(i, M)`) and on `k` (`range(i + 1, M)`, `range(j, K)`),
transposed operands (`A[k, i]`), several `k` loops adding into one sum, two terms and a
subtraction in one update, an epilogue that reads other arrays, and function-level tensor
statements with a matrix product (`@`, `np.dot`), a matrix times a row, and a row times a matrix
inside a larger value.
"""
import numpy as np


def gemm_updates(alpha, beta, C, A, B):
    NI, NK = A.shape
    NJ = B.shape[1]
    #pragma parallel for
    for i in range(NI):
        #pragma simd
        for j in range(NJ):
            C[i, j] *= beta
        for k in range(NK):
            #pragma simd
            for j in range(NJ):
                C[i, j] += alpha * A[i, k] * B[k, j]


def gemm_acc(alpha, beta, C, A, B):
    NI, NK = A.shape
    NJ = B.shape[1]
    #pragma parallel for
    for i in range(NI):
        for j in range(NJ):
            s = 0.0
            #pragma simd
            for k in range(NK):
                s += A[i, k] * B[k, j]
            C[i, j] = beta * C[i, j] + alpha * s


def trmm_into(alpha, A, B, out):
    # out = alpha * (B + strict lower part of A, transposed, times B): row i sums rows k > i.
    M, N = B.shape
    #pragma parallel for
    for i in range(M):
        for j in range(N):
            s = 0.0
            for k in range(i + 1, M):
                s += A[k, i] * B[k, j]
            out[i, j] = alpha * (B[i, j] + s)


def symm_lower(alpha, beta, C, A, B):
    # A is symmetric and only its lower triangle is read: A[i, k] for k < i, A[k, i] for k > i.
    # `simd` on j: the general kernel keeps one sum per lane of j.
    M, N = C.shape
    #pragma parallel for
    for i in range(M):
        #pragma simd
        for j in range(N):
            s = 0.0
            for k in range(i):
                s += A[i, k] * B[k, j]
            for k in range(i + 1, M):
                s += A[k, i] * B[k, j]
            C[i, j] = beta * C[i, j] + alpha * (A[i, i] * B[i, j] + s)


def syr2k_diff(alpha, beta, C, A, B):
    N, M = A.shape
    #pragma parallel for
    for i in range(N):
        #pragma simd
        for j in range(i + 1):
            C[i, j] *= beta
        for k in range(M):
            #pragma simd
            for j in range(i + 1):
                C[i, j] += A[j, k] * alpha * B[i, k] - B[j, k] * alpha * A[i, k]


def cov_upper(X, cov):
    n, M = X.shape
    #pragma parallel for
    for i in range(M):
        for j in range(i, M):
            s = 0.0
            for k in range(n):
                s += X[k, i] * X[k, j]
            cov[i, j] = s / (n - 1)


def band_from_column(A, B, C):
    # The reduction starts at the column: the bound masks the (k, j) operand.
    NI, K = A.shape
    NJ = B.shape[1]
    #pragma parallel for
    for i in range(NI):
        for j in range(NJ):
            s = 0.0
            for k in range(j, K):
                s -= A[i, k] * B[k, j]
            C[i, j] = s


def gemm_tf32(C, A, B):
    # `tf32`: float32 tiles may round operands to TF32 (float64 ones never do).
    NI, NK = A.shape
    NJ = B.shape[1]
    #pragma parallel for tf32
    for i in range(NI):
        for j in range(NJ):
            s = 0.0
            for k in range(NK):
                s += A[i, k] * B[k, j]
            C[i, j] = s


def row_times_matrix(C, A, B):
    # A row of A times B (`@` in a row statement): the sum over k is the tiles' reduction.
    M, K = A.shape
    N = B.shape[1]
    #pragma parallel for
    for i in range(M):
        C[i, :N] += A[i, :K] @ B[:K, :N]


def row_times_matrix_scaled(alpha, beta, C, A, B):
    # The product inside a larger value: one sum per element of the row, stored through the rest.
    M, K = A.shape
    N = B.shape[1]
    #pragma parallel for
    for i in range(M):
        C[i, :N] = beta * C[i, :N] + alpha * (A[i, :K] @ B[:K, :N])


def matrix_times_row(C, A, B):
    # B times a row of A: each C[i, j] sums B[j, k] * A[i, k] (B's rows are the columns).
    M, K = A.shape
    N = B.shape[0]
    #pragma parallel for
    for i in range(M):
        C[i, :N] = B[:N, :K] @ A[i, :K]


def gemm_statement(alpha, beta, C, A, B):
    # The whole gemm as one tensor statement, both output dimensions parallel.
    NI, NK = A.shape
    NJ = B.shape[1]
    #pragma :NI=>parallel :NJ=>parallel
    C[:NI, :NJ] = beta * C[:NI, :NJ] + alpha * (A[:NI, :NK] @ B[:NK, :NJ])


def dot_rows(C, A, B):
    # np.dot of A without its first column and the top rows of B, only the rows parallel.
    M, K = A.shape
    N = B.shape[1]
    #pragma :M=>parallel
    C[:M, :N] = np.dot(A[:M, 1:K], B[:K - 1, :N])
