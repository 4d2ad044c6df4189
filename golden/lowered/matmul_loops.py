# appyc 0.1.0 --emit lowered: samples/matmul_loops.py after the high-level passes (assembly APPy).
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
    # _gemm_updates_kernel0
    #pragma parallel for
    for i in range(0, NI, 1):
        for _j_base in range(0, NJ, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, NJ)
            appy.syncthreads()
            C[i, j] = C[i, j] * beta
            appy.syncthreads()
        for k in range(0, NK, 1):
            for _j_base1 in range(0, NJ, appy.MVL):
                j = appy.vidx(_j_base1, appy.MVL, NJ)
                appy.syncthreads()
                C[i, j] = C[i, j] + alpha * A[i, k] * B[k, j]
                appy.syncthreads()


def gemm_acc(alpha, beta, C, A, B):
    NI, NK = A.shape
    NJ = B.shape[1]
    # _gemm_acc_kernel0
    #pragma parallel for
    for i in range(0, NI, 1):
        for j in range(0, NJ, 1):
            s = 0.0
            for _k_base in range(0, NK, appy.MVL):
                k = appy.vidx(_k_base, appy.MVL, NK)
                s = s + sum(A[i, k] * B[k, j])
            appy.syncthreads()
            C[i, j] = beta * C[i, j] + alpha * s
            appy.syncthreads()


def trmm_into(alpha, A, B, out):
    # out = alpha * (B + strict lower part of A, transposed, times B): row i sums rows k > i.
    M, N = B.shape
    # _trmm_into_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        for j in range(0, N, 1):
            s = 0.0
            for k in range(i + 1, M, 1):
                s = s + A[k, i] * B[k, j]
            out[i, j] = alpha * (B[i, j] + s)


def symm_lower(alpha, beta, C, A, B):
    # A is symmetric and only its lower triangle is read: A[i, k] for k < i, A[k, i] for k > i.
    # `simd` on j: the general kernel keeps one sum per lane of j.
    M, N = C.shape
    # _symm_lower_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        for _j_base in range(0, N, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, N)
            s = 0.0
            for _k_base in range(0, i, 32):
                k = appy.vidx(_k_base, 32, i)
                s = s + sum(A[i, k] * B[k, j], axis=0)
            for _k_base1 in range(i + 1, M, 32):
                k = appy.vidx(_k_base1, 32, M)
                s = s + sum(A[k, i] * B[k, j], axis=0)
            C[i, j] = beta * C[i, j] + alpha * (A[i, i] * B[i, j] + s)


def syr2k_diff(alpha, beta, C, A, B):
    N, M = A.shape
    # _syr2k_diff_kernel0
    #pragma parallel for
    for i in range(0, N, 1):
        for _j_base in range(0, i + 1, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, i + 1)
            appy.syncthreads()
            C[i, j] = C[i, j] * beta
            appy.syncthreads()
        for k in range(0, M, 1):
            for _j_base1 in range(0, i + 1, appy.MVL):
                j = appy.vidx(_j_base1, appy.MVL, i + 1)
                appy.syncthreads()
                C[i, j] = C[i, j] + (A[j, k] * alpha * B[i, k] - B[j, k] * alpha * A[i, k])
                appy.syncthreads()


def cov_upper(X, cov):
    n, M = X.shape
    # _cov_upper_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        for j in range(i, M, 1):
            s = 0.0
            for k in range(0, n, 1):
                s = s + X[k, i] * X[k, j]
            cov[i, j] = s / (n - 1)


def band_from_column(A, B, C):
    # The reduction starts at the column: the bound masks the (k, j) operand.
    NI, K = A.shape
    NJ = B.shape[1]
    # _band_from_column_kernel0
    #pragma parallel for simd
    for i in range(0, NI, 1):
        i = appy.vidx(i, appy.MVL, NI)
        for j in range(0, NJ, 1):
            s = 0.0
            for _k_base in range(j, K, 32):
                k = appy.vidx(_k_base, 32, K)
                s = s - sum(A[i, k] * B[k, j], axis=0)
            C[i, j] = s


def gemm_tf32(C, A, B):
    # `tf32`: float32 tiles may round operands to TF32 (float64 ones never do).
    NI, NK = A.shape
    NJ = B.shape[1]
    # _gemm_tf32_kernel0
    #pragma parallel for simd
    for i in range(0, NI, 1):
        i = appy.vidx(i, appy.MVL, NI)
        for j in range(0, NJ, 1):
            s = 0.0
            for _k_base in range(0, NK, 32):
                k = appy.vidx(_k_base, 32, NK)
                s = s + sum(A[i, k] * B[k, j], axis=0)
            C[i, j] = s


def row_times_matrix(C, A, B):
    # A row of A times B (`@` in a row statement): the sum over k is the tiles' reduction.
    M, K = A.shape
    N = B.shape[1]
    # _row_times_matrix_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        for _i in range(0, N, 1):
            _acc = 0
            for _i1_base in range(0, K, appy.MVL):
                _i1 = appy.vidx(_i1_base, appy.MVL, K)
                _acc = _acc + sum(A[i, _i1] * B[_i1, _i])
            C[i, _i] = C[i, _i] + _acc


def row_times_matrix_scaled(alpha, beta, C, A, B):
    # The product inside a larger value: one sum per element of the row, stored through the rest.
    M, K = A.shape
    N = B.shape[1]
    # _row_times_matrix_scaled_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        for _i in range(0, N, 1):
            _acc = 0
            for _i1_base in range(0, K, appy.MVL):
                _i1 = appy.vidx(_i1_base, appy.MVL, K)
                _acc = _acc + sum(A[i, _i1] * B[_i1, _i])
            C[i, _i] = beta * C[i, _i] + alpha * _acc


def matrix_times_row(C, A, B):
    # B times a row of A: each C[i, j] sums B[j, k] * A[i, k] (B's rows are the columns).
    M, K = A.shape
    N = B.shape[0]
    # _matrix_times_row_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        for _i in range(0, N, 1):
            _acc = 0
            for _i1_base in range(0, K, appy.MVL):
                _i1 = appy.vidx(_i1_base, appy.MVL, K)
                _acc = _acc + sum(B[_i, _i1] * A[i, _i1])
            C[i, _i] = _acc


def gemm_statement(alpha, beta, C, A, B):
    # The whole gemm as one tensor statement, both output dimensions parallel.
    NI, NK = A.shape
    NJ = B.shape[1]
    # _gemm_statement_kernel0
    #pragma parallel for
    for _p0 in range(0, NI, 1):
        #pragma parallel for
        for _p1 in range(0, NJ, 1):
            _acc = 0
            for _i_base in range(0, NK, appy.MVL):
                _i = appy.vidx(_i_base, appy.MVL, NK)
                _acc = _acc + sum(A[_p0, _i] * B[_i, _p1])
            _r = _acc
            C[_p0, _p1] = beta * C[_p0, _p1] + alpha * _r


def dot_rows(C, A, B):
    # np.dot of A without its first column and the top rows of B, only the rows parallel.
    M, K = A.shape
    N = B.shape[1]
    # _dot_rows_kernel0
    #pragma parallel for
    for _p0 in range(0, M, 1):
        for _i in range(0, N, 1):
            _acc = 0
            for _i1_base in range(1, K, appy.MVL):
                _i1 = appy.vidx(_i1_base, appy.MVL, K)
                _acc = _acc + sum(A[_p0, _i1] * B[_i1 - 1, _i])
            C[_p0, _i] = _acc
