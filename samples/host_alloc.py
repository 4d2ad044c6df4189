"""Host statements around kernels: allocations and return values.

Exercises: `np.empty_like`, `np.zeros(N)` (fp64 by default), `np.zeros((M, N), dtype=np.float32)`,
`np.full`, `np.ones`, `A.copy()` and `return out` in a compiled function, plus a function without
any pragma (left as plain code, no kernel). Allocations passes/dead_allocations.rs must keep: one
named only inside regions that write and read it, one that only a `return` names.
"""
import numpy as np


def relu_new(A, N):
    out = np.empty_like(A)
    #pragma parallel for simd
    for i in range(N):
        out[i] = max(A[i], 0.0)
    return out


def row_sums_new(A, M, N):
    out = np.zeros(M)
    #pragma parallel for
    for i in range(M):
        acc = 0.0
        #pragma simd
        for j in range(N):
            acc += A[i, j]
        out[i] = acc
    return out


def scaled_copy_2d(A, M, N):
    out = np.zeros((M, N), dtype=np.float32)
    #pragma parallel for
    for i in range(M):
        #pragma parallel for
        for j in range(N):
            out[i, j] = A[i, j] * 2.0
    return out


def fill_add(N):
    a = np.full(N, 2.5)
    b = np.ones(N)
    #pragma parallel for simd
    for i in range(N):
        a[i] = a[i] + b[i] * float(i)
    return a


def positional_dtypes(A, N):
    # NumPy's dtype given positionally (torch takes it only by keyword).
    counts = np.zeros((2,), np.int64)
    weights = np.full(N, 0.5, np.float32)
    steps = np.arange(0, N, 1, np.int64)
    out = np.zeros_like(A, np.float64)
    #pragma parallel for simd
    for i in range(N):
        out[i] = A[i] * weights[i] + steps[i] + counts[1]
    return out


def shifted_copy(A, N):
    out = A.copy()
    #pragma parallel for
    for i in range(1, N):
        out[i] = A[i - 1] + out[i]
    return out


def staged_square(A, B, N):
    # T is named only inside regions, but they write and read it: the allocation stays.
    T = np.empty_like(A)
    #pragma parallel for simd
    for i in range(N):
        T[i] = A[i] * A[i]
    #pragma parallel for simd
    for i in range(N):
        B[i] = T[i] + T[N - 1 - i]
    return B


def scale_with_fresh_counts(A, N):
    # No region names `counts`, but the return does: the allocation stays.
    counts = np.zeros(N, dtype=np.int64)
    #pragma parallel for simd
    for i in range(N):
        A[i] = A[i] * 2.0
    return A, counts


def plain_axpy(a, X, Y, N):
    # No pragma: compiled as plain host code (works on torch tensors as written, no kernel).
    for i in range(N):
        Y[i] = a * X[i] + Y[i]
