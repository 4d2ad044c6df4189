# appyc 0.1.0 --emit lowered: samples/reduction_clause.py after the high-level passes (assembly APPy).
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
    m = -math.inf
    lo = math.inf
    # _moments_kernel0
    #pragma parallel for simd
    for i in range(0, x.shape[0], 1):
        i = appy.vidx(i, appy.MVL, x.shape[0])
        #pragma atomic
        _s_shared[0] = _s_shared[0] + sum(x[i])
        #pragma atomic
        _q_shared[0] = _q_shared[0] + sum(x[i] * x[i])
        #pragma atomic
        _m_shared[0] = max(_m_shared[0], max(x[i]))
        #pragma atomic
        _lo_shared[0] = min(_lo_shared[0], min(x[i]))
    out[0] = s
    out[1] = q
    out[2] = m
    out[3] = lo


def spread(x):
    hi = -math.inf
    lo = math.inf
    # _spread_kernel0
    #pragma parallel for simd
    for i in range(0, x.shape[0], 1):
        i = appy.vidx(i, appy.MVL, x.shape[0])
        #pragma atomic
        _hi_shared[0] = max(_hi_shared[0], max(x[i]))
        #pragma atomic
        _lo_shared[0] = min(_lo_shared[0], min(x[i]))
    return hi - lo


def signed_total(x, keep):
    # No `simd`: one worker per element, some of which never update `s`.
    s = 0.0
    # _signed_total_kernel0
    #pragma parallel for
    for i in range(0, x.shape[0], 1):
        if keep[i] > 0:
            appy.syncthreads()
            #pragma atomic
            _s_shared[0] = _s_shared[0] - x[i]
            appy.syncthreads()
        else:
            appy.syncthreads()
            #pragma atomic
            _s_shared[0] = _s_shared[0] + 2.0 * x[i]
            appy.syncthreads()
    return s


def grid_total(A):
    # The nested `parallel for` is a second grid dimension: the whole grid reduces into `s`.
    s = 0.0
    # _grid_total_kernel0
    #pragma parallel for
    for i in range(0, A.shape[0], 1):
        #pragma parallel for simd
        for j in range(0, A.shape[1], 1):
            j = appy.vidx(j, appy.MVL, A.shape[1])
            #pragma atomic
            _s_shared[0] = _s_shared[0] + sum(A[i, j] * A[i, j])
    return s


def total_from(x, start, n):
    # The buffer starts at the host's value; an empty loop leaves it alone.
    s = start
    # _total_from_kernel0
    #pragma parallel for simd
    for i in range(0, n, 1):
        i = appy.vidx(i, appy.MVL, n)
        #pragma atomic
        _s_shared[0] = _s_shared[0] + sum(x[i])
    return s


def row_strip_peak(C, M, N):
    # The update sits in each row's `simd` loop: every worker keeps its own maximum and
    # combines it once (integers start from int32's lowest, not from -inf).
    m = -2147483648
    # _row_strip_peak_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        _m_part = float('-inf')
        for _j_base in range(0, N, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, N)
            _m_part = max(_m_part, max(C[i, j]))
        #pragma atomic
        _m_shared[0] = max(_m_shared[0], _m_part)
    return m
