# appyc 0.1.0 --emit lowered: samples/region_results.py after the high-level passes (assembly APPy).
"""Scalars a region computes and the host reads after it, as the sequential program leaves them.

Exercises (passes/live_out.rs): a `sequential for` that computes a value, one that updates it
in its loop, a reduction into a name under a dimension pragma (the name bound by the region
first), a convergence loop whose `while` tests such a reduction, and a `parallel for` whose one
iteration that passes a test stores the result.
"""
import numpy as np


def first_plus_one(A):
    s = 0.0
    # _first_plus_one_kernel0
    #pragma sequential for
    for i in range(0, 1, 1):
        s = A[0] + 1.0
    _s_shared[0] = s
    return s


def running_product(x, N):
    p = 1.0
    # _running_product_kernel0
    #pragma sequential for
    _p_local = p
    for i in range(0, N, 1):
        _p_local = _p_local * (1.0 + 0.01 * x[i])
    _p_shared[0] = _p_local
    return p


def sum_into_name(A, N):
    # _sum_into_name_kernel0
    #pragma sequential for
    _acc = 0
    for _i_base in range(0, N, appy.MVL):
        _i = appy.vidx(_i_base, appy.MVL, N)
        _acc = _acc + sum(A[_i])
    s = _acc
    _s_shared[0] = s
    return s


def relax_tensor_test(A, B, N, tol, max_iter):
    # The test reads a reduction written in tensor form: the loop runs until it is small.
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        # _relax_tensor_test_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            B[i] = 0.5 * (A[i - 1] + A[i + 1])
        # _relax_tensor_test_kernel1
        #pragma sequential for
        _acc = np.abs(B[1] - A[1])
        for _i_base in range(1, N - 1, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N - 1)
            _acc = max(_acc, max(np.abs(B[_i] - A[_i])))
        diff = _acc
        _diff_shared[0] = diff
        A, B = B, A
        it += 1
    return it, diff


def last_element_doubled(A, N):
    last = 0.0
    # _last_element_doubled_kernel0
    #pragma parallel for
    for i in range(0, N, 1):
        A[i] = 2.0 * A[i]
        appy.syncthreads()
        if i == N - 1:
            _last_shared[0] = A[i]
    return last
