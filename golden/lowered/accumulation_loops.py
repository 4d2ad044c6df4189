# appyc 0.1.0 --emit lowered: samples/accumulation_loops.py after the high-level passes (assembly APPy).
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
    # appyc: `temp2 = np.empty((C.shape[1],), dtype=C.dtype)` dropped: no compiled code reads what it allocates
    # appyc: `C *= beta` runs inside _symm_natural_kernel0 below (here if its operand is an array)
    _C_operand = _appyc_fold_operand(C, "*=", beta)  # beta if a number or one element; else `C *= beta` runs here and this is 1.0
    # _symm_natural_kernel0
    #pragma parallel for
    for i in range(0, C.shape[0], 1):
        for _j_base in range(0, C.shape[1], appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, C.shape[1])
            s_0 = 0.0
            for _i_0_base in range(i + 1, C.shape[0], 32):
                i_0 = appy.vidx(_i_0_base, 32, C.shape[0])
                s_0 = s_0 + sum(alpha * B[i_0, j] * A[i_0, i], axis=0)
            for _k_base in range(0, i, 32):
                k = appy.vidx(_k_base, 32, i)
                s_0 = s_0 + sum(alpha * (B[k, j] * A[i, k]), axis=0)
            C[i, j] = C.dtype.type(C[i, j] * _C_operand) + alpha * B[i, j % B.shape[1]] * A[i, i] + s_0
    return C


def symm_shared_line(alpha, beta, C, A, B):
    # symm_natural with its row allocated on the line that doubles alpha: gather keeps the row
    # in registers, yet the line stays (passes/dead_allocations.rs), for its other statement.
    temp2 = torch.empty((C.shape[1],), dtype=C.dtype, device=C.device); alpha = 2.0 * alpha
    # appyc: `C *= beta` runs inside _symm_shared_line_kernel0 below (here if its operand is an array)
    _C_operand = _appyc_fold_operand(C, "*=", beta)  # beta if a number or one element; else `C *= beta` runs here and this is 1.0
    # _symm_shared_line_kernel0
    #pragma parallel for
    for i in range(0, C.shape[0], 1):
        for _j_base in range(0, C.shape[1], appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, C.shape[1])
            s_0 = 0.0
            for _i_0_base in range(i + 1, C.shape[0], 32):
                i_0 = appy.vidx(_i_0_base, 32, C.shape[0])
                s_0 = s_0 + sum(alpha * B[i_0, j] * A[i_0, i], axis=0)
            for _k_base in range(0, i, 32):
                k = appy.vidx(_k_base, 32, i)
                s_0 = s_0 + sum(alpha * (B[k, j] * A[i, k]), axis=0)
            C[i, j] = C.dtype.type(C[i, j] * _C_operand) + alpha * B[i, j % B.shape[1]] * A[i, i] + s_0
    return C


def lower_product(L, B, C):
    # C += (strictly lower part of L) @ B, one column k of L a step.
    # _lower_product_kernel0
    #pragma parallel for
    for i in range(1, C.shape[0], 1):
        for _j_base in range(0, C.shape[1], appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, C.shape[1])
            s_0 = 0.0
            for _k_base in range(0, i, 32):
                k = appy.vidx(_k_base, 32, i)
                s_0 = s_0 + sum(L[i, k] * B[k, j], axis=0)
            C[i, j] = C[i, j] + s_0


def syrk_steps(alpha, C, A):
    # C's lower triangle += alpha * A A^T, one column of A a step.
    # _syrk_steps_kernel0
    #pragma parallel for
    for i in range(0, C.shape[0], 1):
        for _j_base in range(0, i + 1, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, i + 1)
            s_0 = 0.0
            for _k_base in range(0, A.shape[1], 32):
                k = appy.vidx(_k_base, 32, A.shape[1])
                s_0 = s_0 + sum(alpha * A[i, k] * A[j, k], axis=0)
            C[i, j] = C[i, j] + s_0


def column_triangle(L, B, C):
    # C[j, k] += the sum over v >= k of L[v, k] * B[v, j]: each column's sum starts at the
    # column, so the columns cannot be vector lanes (one program an element).
    # _column_triangle_kernel0
    #pragma parallel for
    for j in range(0, C.shape[0], 1):
        #pragma parallel for
        for k in range(0, L.shape[0], 1):
            s_0 = 0.0
            for v in range(k, L.shape[0], 1):
                s_0 = s_0 + L[v, k] * B[v, j]
            C[j, k] = C[j, k] + s_0


def column_sums(A, y, x):
    # x += A^T y, one row of A a step.
    # _column_sums_kernel0
    #pragma parallel for simd
    for j in range(0, A.shape[1], 1):
        j = appy.vidx(j, appy.MVL, A.shape[1])
        s_0 = 0.0
        for _i_base in range(0, A.shape[0], 32):
            i = appy.vidx(_i_base, 32, A.shape[0])
            s_0 = s_0 + sum(A[i, j] * y[i], axis=0)
        x[j] = x[j] + s_0


def prefix_rows(C):
    # Each row adds the one above it, as updated: the iterations do not commute.
    for i in range(1, C.shape[0]):
        # _prefix_rows_kernel0
        #pragma parallel for simd
        for j in range(0, C.shape[1], 1):
            j = appy.vidx(j, appy.MVL, C.shape[1])
            C[i, j] = C[i, j] + C[i - 1, j]
