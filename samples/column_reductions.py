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
    #pragma parallel for simd
    for j in range(N):
        s = 0.0
        for i in range(M):
            s += A[i, j]
        out[j] = s


def atv(beta, A, y, z, x, M, N):
    # gemver's x += beta * A^T y + z.
    #pragma parallel for simd
    for j in range(N):
        s = 0.0
        for i in range(M):
            s += y[i] * A[i, j]
        x[j] += beta * s + z[j]


def col_extremes(A, hi, lo, M, N):
    #pragma parallel for simd
    for j in range(N):
        m = A[0, j]
        n = A[0, j]
        for i in range(1, M):
            m = max(m, A[i, j])
            n = min(n, A[i, j])
        hi[j] = m
        lo[j] = n


def col_moments(A, mean, spread, lo, M, N):
    # Two accumulators, one subtracted into; the rows from `lo`.
    #pragma parallel for simd
    for j in range(N):
        s = 0.0
        q = 0.0
        for i in range(lo, M):
            s += A[i, j]
            q -= A[i, j] * A[i, j] * i
        mean[j] = s / (M - lo)
        spread[j] = q


def col_offsets(A, out, M, N):
    # The update does not read the rows: its value is added once per row.
    #pragma parallel for simd
    for j in range(N):
        t = A[0, j] * 0.5
        s = 1.0
        for i in range(M):
            s += t
        out[j] = s


def col_sums_auto(A, out, M, N):
    # A plain `parallel for`: vectorisation makes its iterations lanes.
    #pragma parallel for
    for j in range(N):
        s = 0.0
        for i in range(M):
            s += A[i, j] * 2.0
        out[j] = s


def gram(A, C, M, N):
    # covariance's product: a `simd` loop's lanes, one row of C per program.
    #pragma parallel for
    for i in range(N):
        #pragma simd
        for j in range(N):
            s = 0.0
            for k in range(M):
                s += A[k, i] * A[k, j]
            C[i, j] = s


def col_prefix(A, P, M, N):
    # Stays a scalar loop: the body stores the running sum.
    #pragma parallel for simd
    for j in range(N):
        s = 0.0
        for i in range(M):
            s += A[i, j]
            P[i, j] = s


def col_decay(A, out, M, N):
    # Stays a scalar loop: the update reads its accumulator besides adding to it.
    #pragma parallel for simd
    for j in range(N):
        s = 1.0
        for i in range(M):
            s = s + 0.5 * s * A[i, j]
        out[j] = s


def col_running_max(A, out, M, N):
    # Stays a scalar loop: one accumulator both added to and maxed, so the order of the rows
    # matters.
    #pragma parallel for simd
    for j in range(N):
        s = 0.0
        for i in range(M):
            s += A[i, j]
            s = max(s, A[i, j] * 2.0)
        out[j] = s


def scaled_col_sums(A, y, out, M, N):
    # A row tile that also stores each row's own elements through a local.
    #pragma parallel for simd
    for j in range(N):
        s = 0.0
        for i in range(M):
            a = A[i, j] * y[i] + 1.0
            A[i, j] = a
            s += a * a
        out[j] = s


def rank2_atv(beta, A, u1, v1, u2, v2, y, z, x, M, N):
    # gemver's first two steps: the update region runs inside the reduction's row tile, so A
    # is read and written once.
    #pragma parallel for
    for i in range(M):
        A[i, :N] += u1[i] * v1[:N] + u2[i] * v2[:N]
    #pragma parallel for simd
    for j in range(N):
        s = 0.0
        for i in range(M):
            s += y[i] * A[i, j]
        x[j] += beta * s + z[j]


def rank1_shifted_sums(A, u, v, out, M, N):
    # Not fused: the reduction reads the rows from 1, the update writes them from 0.
    #pragma parallel for
    for i in range(M):
        A[i, :N] = A[i, :N] * 0.5 + u[i] * v[:N]
    #pragma parallel for simd
    for j in range(N):
        s = 0.0
        for i in range(1, M):
            s += A[i, j]
        out[j] = s


def rank2_atv_ax(alpha, beta, A, u1, v1, u2, v2, w, x, y, z, M, N):
    # gemver whole: the update runs inside the reduction, which stores it; the row pass reads
    # the stored A (the update moved to the row pass lost 5-6 % on an H200: performance.md §67).
    #pragma parallel for
    for i in range(M):
        A[i, :N] += u1[i] * v1[:N] + u2[i] * v2[:N]
    #pragma parallel for simd
    for j in range(N):
        s = 0.0
        for i in range(M):
            s += y[i] * A[i, j]
        x[j] += beta * s + z[j]
    #pragma parallel for
    for i in range(M):
        w[i] += alpha * np.sum(A[i, :N] * x[:N])

