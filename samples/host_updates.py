"""Host statements that update a whole array in place just before the region that stores every
element of it once: the region runs them (passes/fold_host_update.rs), so the host launches
nothing for them and the array crosses memory once.

Exercises: symm's `C *= beta` before a row update (folded); `C -= beta` before a product whose
tiles apply it in their epilogue (folded); `C += beta` (folded); a region that stores only some
rows, so the others must still be scaled on the host (not folded); `C = C * beta`, which binds a
new array and leaves the caller's as it was (not folded). `beta` is a parameter, so a caller may
pass an array NumPy broadcasts against C: the host then applies it and the kernel applies the
operator's identity (the difftests pass arrays, a row, a column, 0-d and one-element arrays).
"""
import numpy as np


def scale_then_update(alpha, beta, C, B):
    C *= beta
    #pragma parallel for
    for i in range(C.shape[0]):
        #pragma simd
        for j in range(C.shape[1]):
            C[i, j] = C[i, j] + alpha * B[i, j]
    return C


def shift_then_product(alpha, beta, C, A, B):
    C -= beta
    #pragma parallel for
    for i in range(C.shape[0]):
        #pragma simd
        for j in range(C.shape[1]):
            s = 0.0
            for k in range(A.shape[1]):
                s += A[i, k] * B[k, j]
            C[i, j] = C[i, j] + alpha * s
    return C


def offset_then_update(alpha, beta, C, B):
    C += beta
    #pragma parallel for
    for i in range(C.shape[0]):
        #pragma simd
        for j in range(C.shape[1]):
            C[i, j] = C[i, j] + alpha * B[i, j]
    return C


def scale_rows_below(alpha, beta, C, B):
    # Row 0 is not stored by the region: the scaling stays on the host.
    C *= beta
    #pragma parallel for
    for i in range(1, C.shape[0]):
        #pragma simd
        for j in range(C.shape[1]):
            C[i, j] = C[i, j] + alpha * B[i, j]
    return C


def rebind_then_update(alpha, beta, C, B):
    # A new array: the caller's C keeps its values.
    C = C * beta
    #pragma parallel for
    for i in range(C.shape[0]):
        #pragma simd
        for j in range(C.shape[1]):
            C[i, j] = C[i, j] + alpha * B[i, j]
    return C
