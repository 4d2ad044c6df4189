# appyc 0.1.0 --emit lowered: samples/host_alloc.py after the high-level passes (assembly APPy).
"""Host statements around kernels: allocations and return values.

Exercises: `np.empty_like`, `np.zeros(N)` (fp64 by default), `np.zeros((M, N), dtype=np.float32)`,
`np.full`, `np.ones`, `A.copy()` and `return out` in a compiled function, plus a function without
any pragma (left as plain code, no kernel). Allocations passes/dead_allocations.rs must keep: one
named only inside regions that write and read it, one that only a `return` names.
"""
import numpy as np


def relu_new(A, N):
    out = torch.empty_like(A)
    # _relu_new_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        out[i] = max(A[i], 0.0)
    return out


def row_sums_new(A, M, N):
    out = torch.zeros(M, dtype=torch.float64, device=A.device)
    # _row_sums_new_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        acc = 0.0
        for _j_base in range(0, N, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, N)
            acc = acc + sum(A[i, j])
        out[i] = acc
    return out


def scaled_copy_2d(A, M, N):
    out = torch.zeros((M, N), dtype=torch.float32, device=A.device)
    # _scaled_copy_2d_kernel0
    #pragma parallel for simd
    for i in range(0, M, 1):
        i = appy.vidx(i, appy.ROW_BLOCK, M)
        #pragma parallel for simd
        for j in range(0, N, 1):
            j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, N)
            out[i, j] = A[i, j] * 2.0
    return out


def fill_add(N):
    a = torch.full(_appyc_shape(N), 2.5, dtype=_appyc_fill_dtype(2.5), device=_appyc_device())
    b = torch.ones(N, dtype=torch.float64, device=_appyc_device())
    # _fill_add_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        a[i] = a[i] + b[i] * float(i)
    return a


def positional_dtypes(A, N):
    # NumPy's dtype given positionally (torch takes it only by keyword).
    counts = torch.zeros((2,), dtype=torch.int64, device=A.device)
    weights = torch.full(_appyc_shape(N), 0.5, dtype=torch.float32, device=A.device)
    steps = torch.arange(0, N, 1, dtype=torch.int64, device=A.device)
    out = torch.zeros_like(A, dtype=torch.float64)
    # _positional_dtypes_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        out[i] = A[i] * weights[i] + steps[i] + counts[1]
    return out


def shifted_copy(A, N):
    out = A.clone()
    # _shifted_copy_kernel0
    #pragma parallel for simd
    for i in range(1, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        out[i] = A[i - 1] + out[i]
    return out


def staged_square(A, B, N):
    # T is named only inside regions, but they write and read it: the allocation stays.
    T = torch.empty_like(A)
    # _staged_square_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        T[i] = A[i] * A[i]
    # _staged_square_kernel1
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        B[i] = T[i] + T[N - 1 - i]
    return B


def scale_with_fresh_counts(A, N):
    # No region names `counts`, but the return does: the allocation stays.
    counts = torch.zeros(N, dtype=torch.int64, device=A.device)
    # _scale_with_fresh_counts_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        A[i] = A[i] * 2.0
    return A, counts


def plain_axpy(a, X, Y, N):
    # No pragma: compiled as plain host code (works on torch tensors as written, no kernel).
    for i in range(N):
        Y[i] = a * X[i] + Y[i]
