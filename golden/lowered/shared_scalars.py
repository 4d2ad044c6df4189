# appyc 0.1.0 --emit lowered: samples/shared_scalars.py after the high-level passes (assembly APPy).
"""APPy 0.3's `shared(x)`: scalars that all iterations of a `parallel for` share.

Exercises: sum, max and min reductions across workers (`+=`, `-=`, `max(...)`, `np.minimum`),
a conditional update in a loop without `simd`, a ternary update, an int counter, a read-only
shared scalar, a plain store from one iteration, an update inside an inner `simd` loop, and an
empty loop (the value stays what it was). After the loop the scalar is a Python number again.
"""
import numpy as np


def total(x):
    acc = 0.0
    # _total_kernel0
    #pragma parallel for simd
    for i in range(0, x.shape[0], 1):
        i = appy.vidx(i, appy.MVL, x.shape[0])
        #pragma atomic
        _acc_shared[0] = _acc_shared[0] + sum(x[i])
    return acc


def total_from(x, start, n):
    # The buffer starts at the host's value; an empty loop leaves it alone.
    acc = start
    # _total_from_kernel0
    #pragma parallel for simd
    for i in range(0, n, 1):
        i = appy.vidx(i, appy.MVL, n)
        #pragma atomic
        _acc_shared[0] = _acc_shared[0] - sum(x[i] * x[i])
    return acc


def largest(x):
    best = -math.inf
    # _largest_kernel0
    #pragma parallel for simd
    for i in range(0, x.shape[0], 1):
        i = appy.vidx(i, appy.MVL, x.shape[0])
        #pragma atomic
        _best_shared[0] = max(_best_shared[0], max(x[i]))
    return best


def smallest(x):
    low = math.inf
    # _smallest_kernel0
    #pragma parallel for simd
    for i in range(0, x.shape[0], 1):
        i = appy.vidx(i, appy.MVL, x.shape[0])
        #pragma atomic
        _low_shared[0] = min(_low_shared[0], min(x[i]))
    return low


def masked_total(x, keep):
    acc = 0.0
    # _masked_total_kernel0
    #pragma parallel for
    for i in range(0, x.shape[0], 1):
        if keep[i] > 0:
            #pragma atomic
            _acc_shared[0] = _acc_shared[0] + x[i]
    return acc


def count_positive(x):
    n = 0
    # _count_positive_kernel0
    #pragma parallel for simd
    for i in range(0, x.shape[0], 1):
        i = appy.vidx(i, appy.MVL, x.shape[0])
        #pragma atomic
        _n_shared[0] = _n_shared[0] + sum(1 if x[i] > 0 else 0)
    return n


def midpoint_integral(steps, width):
    # `width` is shared but only read: every worker sees the host's value.
    area = 0.0
    # _midpoint_integral_kernel0
    #pragma parallel for simd
    for i in range(0, steps, 1):
        i = appy.vidx(i, appy.MVL, steps)
        t = (i + 0.5) * width
        #pragma atomic
        _area_shared[0] = _area_shared[0] + sum(4.0 / (1.0 + t * t))
    return area * width


def flag_index(x, k):
    # One iteration stores: no race, and the host sees its value.
    found = -1
    # _flag_index_kernel0
    #pragma parallel for
    for i in range(0, x.shape[0], 1):
        if i == k:
            _found_shared[0] = i
    return found


def frobenius_squared(A):
    acc = 0.0
    # _frobenius_squared_kernel0
    #pragma parallel for
    for i in range(0, A.shape[0], 1):
        _acc_part = 0
        for _j_base in range(0, A.shape[1], appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, A.shape[1])
            _acc_part = _acc_part + sum(A[i, j] * A[i, j])
        #pragma atomic
        _acc_shared[0] = _acc_shared[0] + _acc_part
    return acc
