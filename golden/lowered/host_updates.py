# appyc 0.1.0 --emit lowered: samples/host_updates.py after the high-level passes (assembly APPy).
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
    # appyc: `C *= beta` runs inside _scale_then_update_kernel0 below (here if its operand is an array)
    _C_operand = _appyc_fold_operand(C, "*=", beta)  # beta if a number or one element; else `C *= beta` runs here and this is 1.0
    # _scale_then_update_kernel0
    #pragma parallel for simd
    for i in range(0, C.shape[0], 1):
        i = appy.vidx(i, appy.ROW_BLOCK, C.shape[0])
        #pragma parallel for simd
        for j in range(0, C.shape[1], 1):
            j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, C.shape[1])
            C[i, j] = C.dtype.type(C[i, j] * _C_operand) + alpha * B[i, j]
    return C


def shift_then_product(alpha, beta, C, A, B):
    # appyc: `C -= beta` runs inside _shift_then_product_kernel0 below (here if its operand is an array)
    _C_operand = _appyc_fold_operand(C, "-=", beta)  # beta if a number or one element; else `C -= beta` runs here and this is 0.0
    # _shift_then_product_kernel0
    #pragma parallel for
    for i in range(0, C.shape[0], 1):
        for _j_base in range(0, C.shape[1], appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, C.shape[1])
            s = 0.0
            for _k_base in range(0, A.shape[1], 32):
                k = appy.vidx(_k_base, 32, A.shape[1])
                s = s + sum(A[i, k] * B[k, j], axis=0)
            C[i, j] = C.dtype.type(C[i, j] - _C_operand) + alpha * s
    return C


def offset_then_update(alpha, beta, C, B):
    # appyc: `C += beta` runs inside _offset_then_update_kernel0 below (here if its operand is an array)
    _C_operand = _appyc_fold_operand(C, "+=", beta)  # beta if a number or one element; else `C += beta` runs here and this is -0.0
    # _offset_then_update_kernel0
    #pragma parallel for simd
    for i in range(0, C.shape[0], 1):
        i = appy.vidx(i, appy.ROW_BLOCK, C.shape[0])
        #pragma parallel for simd
        for j in range(0, C.shape[1], 1):
            j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, C.shape[1])
            C[i, j] = C.dtype.type(C[i, j] + _C_operand) + alpha * B[i, j]
    return C


def scale_rows_below(alpha, beta, C, B):
    # Row 0 is not stored by the region: the scaling stays on the host.
    C *= beta
    # _scale_rows_below_kernel0
    #pragma parallel for simd
    for i in range(1, C.shape[0], 1):
        i = appy.vidx(i, appy.ROW_BLOCK, C.shape[0])
        #pragma parallel for simd
        for j in range(0, C.shape[1], 1):
            j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, C.shape[1])
            C[i, j] = C[i, j] + alpha * B[i, j]
    return C


def rebind_then_update(alpha, beta, C, B):
    # A new array: the caller's C keeps its values.
    C = C * beta
    # _rebind_then_update_kernel0
    #pragma parallel for simd
    for i in range(0, C.shape[0], 1):
        i = appy.vidx(i, appy.ROW_BLOCK, C.shape[0])
        #pragma parallel for simd
        for j in range(0, C.shape[1], 1):
            j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, C.shape[1])
            C[i, j] = C[i, j] + alpha * B[i, j]
    return C
