# appyc 0.1.0 --emit lowered: samples/spmv_csr.py after the high-level passes (assembly APPy).
"""Sparse matrix-vector product in CSR form (paper Listing 4).

Exercises: `#pragma simd` / `#pragma simd(N)` on an inner loop with dynamic bounds read from an
array (`range(A_row[i], A_row[i + 1])`), a gather `x[A_col[j]]`, a reduction into memory
(`y[i] += ...`) and a scalar accumulator (`acc = 0.0; acc += ...; y[i] = acc`), rows without any
nonzero, and a parallel loop bound given by an expression (`N - 1`).
"""
import numpy as np


def spmv(A_row, A_col, A_val, x, y, N):
    # N is len(A_row): there are N - 1 rows.
    # _spmv_kernel0
    #pragma parallel for
    for i in range(0, N - 1, 1):
        y[i] = 0.0
        appy.syncthreads()
        _y_elem = y[i]
        _j_lo = A_row[i]
        _j_hi = A_row[1 + i]
        for _j_base in range(_j_lo, _j_hi, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, _j_hi)
            col = A_col[j]
            _y_elem = _y_elem + sum(A_val[j] * x[col])
        appy.syncthreads()
        y[i] = _y_elem


def spmv_acc(indptr, indices, data, x, y, M):
    # _spmv_acc_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        acc = 0.0
        _j_lo = indptr[i]
        _j_hi = indptr[i + 1]
        for _j_base in range(_j_lo, _j_hi, 32):
            j = appy.vidx(_j_base, 32, _j_hi)
            acc = acc + sum(data[j] * x[indices[j]])
        y[i] = acc
