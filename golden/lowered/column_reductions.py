# appyc 0.1.0 --emit lowered: samples/column_reductions.py after the high-level passes (assembly APPy).
"""Column reductions: each program takes a vector of columns and walks the rows.

Exercises: a plain loop inside `parallel for simd` (or a `simd` loop) whose body only reduces
into lane vectors, lowered as a row tile (strips of rows on a second vector axis, added element
by element into a [rows, lanes] accumulator whose rows are reduced once after the loop): column
sums, a transposed matrix-vector product like gemver's, max and min, two accumulators in one
loop with a subtraction, a loop with a start, an update that does not read the rows, the
`parallel for` that vectorisation turns into lanes, and a `simd` loop's lanes; then loops that
stay scalar (the body stores, reads its accumulator in the update, or both adds to and maxes
one accumulator). Then stores of each row's own elements inside a row tile, written by hand or
made by fusing an element-wise update into the column reduction after it (gemver's A^T y, and
gemver whole with its row pass A x after them), and an update that reads rows the reduction does
not (not fused).
"""
import numpy as np


def col_sums(A, out, M, N):
    # _col_sums_kernel0
    #pragma parallel for simd
    for j in range(0, N, 1):
        j = appy.vidx(j, appy.MVL, N)
        s = 0.0
        for _i_base in range(0, M, 32):
            i = appy.vidx(_i_base, 32, M)
            s = s + sum(A[i, j], axis=0)
        out[j] = s


def atv(beta, A, y, z, x, M, N):
    # gemver's x += beta * A^T y + z.
    # _atv_kernel0
    #pragma parallel for simd
    for j in range(0, N, 1):
        j = appy.vidx(j, appy.MVL, N)
        s = 0.0
        for _i_base in range(0, M, 32):
            i = appy.vidx(_i_base, 32, M)
            s = s + sum(y[i] * A[i, j], axis=0)
        x[j] = x[j] + (beta * s + z[j])


def col_extremes(A, hi, lo, M, N):
    # _col_extremes_kernel0
    #pragma parallel for simd
    for j in range(0, N, 1):
        j = appy.vidx(j, appy.MVL, N)
        m = A[0, j]
        n = A[0, j]
        for _i_base in range(1, M, 32):
            i = appy.vidx(_i_base, 32, M)
            m = max(m, max(A[i, j], axis=0))
            n = min(n, min(A[i, j], axis=0))
        hi[j] = m
        lo[j] = n


def col_moments(A, mean, spread, lo, M, N):
    # Two accumulators, one subtracted into; the rows from `lo`.
    # _col_moments_kernel0
    #pragma parallel for simd
    for j in range(0, N, 1):
        j = appy.vidx(j, appy.MVL, N)
        s = 0.0
        q = 0.0
        for _i_base in range(lo, M, 32):
            i = appy.vidx(_i_base, 32, M)
            s = s + sum(A[i, j], axis=0)
            q = q - sum(A[i, j] * A[i, j] * i, axis=0)
        mean[j] = s / (M - lo)
        spread[j] = q


def col_offsets(A, out, M, N):
    # The update does not read the rows: its value is added once per row.
    # _col_offsets_kernel0
    #pragma parallel for simd
    for j in range(0, N, 1):
        j = appy.vidx(j, appy.MVL, N)
        t = A[0, j] * 0.5
        s = 1.0
        for _i_base in range(0, M, 32):
            i = appy.vidx(_i_base, 32, M)
            s = s + sum(t, axis=0)
        out[j] = s


def col_sums_auto(A, out, M, N):
    # A plain `parallel for`: vectorisation makes its iterations lanes.
    # _col_sums_auto_kernel0
    #pragma parallel for simd
    for j in range(0, N, 1):
        j = appy.vidx(j, appy.MVL, N)
        s = 0.0
        for _i_base in range(0, M, 32):
            i = appy.vidx(_i_base, 32, M)
            s = s + sum(A[i, j] * 2.0, axis=0)
        out[j] = s


def gram(A, C, M, N):
    # covariance's product: a `simd` loop's lanes, one row of C per program.
    # _gram_kernel0
    #pragma parallel for
    for i in range(0, N, 1):
        for _j_base in range(0, N, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, N)
            s = 0.0
            for _k_base in range(0, M, 32):
                k = appy.vidx(_k_base, 32, M)
                s = s + sum(A[k, i] * A[k, j], axis=0)
            C[i, j] = s


def col_prefix(A, P, M, N):
    # Stays a scalar loop: the body stores the running sum.
    # _col_prefix_kernel0
    #pragma parallel for simd
    for j in range(0, N, 1):
        j = appy.vidx(j, appy.MVL, N)
        s = 0.0
        for i in range(0, M, 1):
            s = s + A[i, j]
            P[i, j] = s


def col_decay(A, out, M, N):
    # Stays a scalar loop: the update reads its accumulator besides adding to it.
    # _col_decay_kernel0
    #pragma parallel for simd
    for j in range(0, N, 1):
        j = appy.vidx(j, appy.MVL, N)
        s = 1.0
        for i in range(0, M, 1):
            s = s + 0.5 * s * A[i, j]
        out[j] = s


def col_running_max(A, out, M, N):
    # Stays a scalar loop: one accumulator both added to and maxed, so the order of the rows
    # matters.
    # _col_running_max_kernel0
    #pragma parallel for simd
    for j in range(0, N, 1):
        j = appy.vidx(j, appy.MVL, N)
        s = 0.0
        for i in range(0, M, 1):
            s = s + A[i, j]
            s = max(s, A[i, j] * 2.0)
        out[j] = s


def scaled_col_sums(A, y, out, M, N):
    # A row tile that also stores each row's own elements through a local.
    # _scaled_col_sums_kernel0
    #pragma parallel for simd
    for j in range(0, N, 1):
        j = appy.vidx(j, appy.MVL, N)
        s = 0.0
        for _i_base in range(0, M, 32):
            i = appy.vidx(_i_base, 32, M)
            a = A[i, j] * y[i] + 1.0
            A[i, j] = a
            s = s + sum(a * a, axis=0)
        out[j] = s


def rank2_atv(beta, A, u1, v1, u2, v2, y, z, x, M, N):
    # gemver's first two steps: the update region runs inside the reduction's row tile, so A
    # is read and written once.
    # appyc: this region runs inside _rank2_atv_kernel1 below
    # _rank2_atv_kernel1
    #pragma parallel for simd
    for j in range(0, N, 1):
        j = appy.vidx(j, appy.MVL, N)
        s = 0.0
        for _i_base in range(0, M, 32):
            i = appy.vidx(_i_base, 32, M)
            _A_ij = A.dtype.type(A[i, j] + (u1[i] * v1[j] + u2[i] * v2[j]))
            A[i, j] = _A_ij
            s = s + sum(y[i] * _A_ij, axis=0)
        x[j] = x[j] + (beta * s + z[j])


def rank1_shifted_sums(A, u, v, out, M, N):
    # Not fused: the reduction reads the rows from 1, the update writes them from 0.
    # _rank1_shifted_sums_kernel0
    #pragma parallel for simd
    for i in range(0, M, 1):
        i = appy.vidx(i, appy.ROW_BLOCK, M)
        #pragma parallel for simd
        for _i in range(0, N, 1):
            _i = appy.vidx(_i, appy.MVL // appy.ROW_BLOCK, N)
            A[i, _i] = A[i, _i] * 0.5 + u[i] * v[_i]
    # _rank1_shifted_sums_kernel1
    #pragma parallel for simd
    for j in range(0, N, 1):
        j = appy.vidx(j, appy.MVL, N)
        s = 0.0
        for _i_base in range(1, M, 32):
            i = appy.vidx(_i_base, 32, M)
            s = s + sum(A[i, j], axis=0)
        out[j] = s


def rank2_atv_ax(alpha, beta, A, u1, v1, u2, v2, w, x, y, z, M, N):
    # gemver whole: the update runs inside the reduction, which stores it; the row pass reads
    # the stored A (the update moved to the row pass lost 5-6 % on an H200: performance.md §67).
    # appyc: this region runs inside _rank2_atv_ax_kernel1 below
    # _rank2_atv_ax_kernel1
    #pragma parallel for simd
    for j in range(0, N, 1):
        j = appy.vidx(j, appy.MVL, N)
        s = 0.0
        for _i_base in range(0, M, 32):
            i = appy.vidx(_i_base, 32, M)
            _A_ij = A.dtype.type(A[i, j] + (u1[i] * v1[j] + u2[i] * v2[j]))
            A[i, j] = _A_ij
            s = s + sum(y[i] * _A_ij, axis=0)
        x[j] = x[j] + (beta * s + z[j])
    # _rank2_atv_ax_kernel2
    #pragma parallel for
    for i in range(0, M, 1):
        _acc = 0
        for _i_base in range(0, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            _acc = _acc + sum(A[i, _i] * x[_i])
        _r = _acc
        w[i] = w[i] + alpha * _r

