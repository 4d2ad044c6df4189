"""OpenMP's `reduction(op:x)` clause on `parallel for`: each worker reduces its own updates of
`x`, and the workers' results are combined into `x` when the loop ends, so `x` after the loop is
what the sequential loop computes.

Exercises: `reduction(+:s, q)` (two variables in one clause; `+=`, `x = x + v`, `-=`), several
clauses on one pragma (`reduction(max:m)`, `reduction(min:lo)` beside it), `max`/`np.maximum`
and `min`/`np.minimum`, fp32 and fp64 data (the result has NumPy's dtype), a conditional update
in a loop without `simd`, a 2-D grid reduced as a whole, an int32 maximum updated in each
row's `simd` loop (a private accumulator a worker), and an empty loop (the value stays).
"""
import numpy as np


def moments(x, out):
    s = 0.0
    q = 0.0
    m = -np.inf
    lo = np.inf
    #pragma parallel for simd reduction(+:s, q) reduction(max:m) reduction(min:lo)
    for i in range(x.shape[0]):
        s += x[i]
        q = q + x[i] * x[i]
        m = max(m, x[i])
        lo = np.minimum(lo, x[i])
    out[0] = s
    out[1] = q
    out[2] = m
    out[3] = lo


def spread(x):
    hi = -np.inf
    lo = np.inf
    #pragma parallel for simd reduction(max:hi) reduction(min:lo)
    for i in range(x.shape[0]):
        hi = np.maximum(hi, x[i])
        lo = min(x[i], lo)
    return hi - lo


def signed_total(x, keep):
    # No `simd`: one worker per element, some of which never update `s`.
    s = 0.0
    #pragma parallel for reduction(sum:s)
    for i in range(x.shape[0]):
        if keep[i] > 0:
            s -= x[i]
        else:
            s += 2.0 * x[i]
    return s


def grid_total(A):
    # The nested `parallel for` is a second grid dimension: the whole grid reduces into `s`.
    s = 0.0
    #pragma parallel for reduction(+:s)
    for i in range(A.shape[0]):
        #pragma parallel for simd
        for j in range(A.shape[1]):
            s += A[i, j] * A[i, j]
    return s


def total_from(x, start, n):
    # The buffer starts at the host's value; an empty loop leaves it alone.
    s = start
    #pragma parallel for simd reduction(+:s)
    for i in range(n):
        s += x[i]
    return s


def row_strip_peak(C, M, N):
    # The update sits in each row's `simd` loop: every worker keeps its own maximum and
    # combines it once (integers start from int32's lowest, not from -inf).
    m = -2147483648
    #pragma parallel for reduction(max:m)
    for i in range(M):
        #pragma simd
        for j in range(N):
            m = max(m, C[i, j])
    return m
