# appyc 0.1.0 --emit lowered: samples/region_results.py after the high-level passes (assembly APPy).
"""Scalars a region computes and the host reads after it, as the sequential program leaves them.

Exercises (passes/live_out.rs): a `sequential for` that computes a value, one that updates it
in its loop, and a `parallel for` whose one iteration that passes a test stores the result.
Reductions into a name (passes/scalar_reductions.rs), which become reduction clauses: under a
dimension pragma (the name bound by the region first), tested by a `while` (one persistent
kernel), and written bare, as NumPy users write a convergence test and an energy.
"""
import numpy as np


def first_plus_one(A):
    s = 0.0
    # _first_plus_one_kernel0
    #pragma sequential for
    s = 0
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
    #pragma :N=>reduce(sum)
    # _sum_into_name_kernel0
    #pragma parallel for simd
    for _s_r0 in range(0, N, 1):
        _s_r0 = appy.vidx(_s_r0, appy.MVL, N)
        #pragma atomic
        _s_shared[0] = _s_shared[0] + sum(A[_s_r0])
    return s


def relax_tensor_test(A, B, N, tol, max_iter):
    # The test reads a reduction written in tensor form: the loop runs until it is small.
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        # appyc: this region runs inside _relax_tensor_test_kernel0 below
        #pragma 1:N-1=>reduce(max)
        # _relax_tensor_test_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            _B_stored = B.dtype.type(0.5 * (A[i - 1] + A[i + 1]))
            B[i] = _B_stored
            #pragma atomic
            _diff_shared[0] = max(_diff_shared[0], max(np.abs(_B_stored - A[i])))
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


def relax_bare_test(A, B, N, tol, max_iter):
    # The convergence test as NumPy code, no pragma: still one persistent kernel.
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        # appyc: this region runs inside _relax_bare_test_kernel0 below
        # _relax_bare_test_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            _B_stored = B.dtype.type(0.5 * (A[i - 1] + A[i + 1]))
            B[i] = _B_stored
            #pragma atomic
            _diff_shared[0] = max(_diff_shared[0], max(np.abs(_B_stored - A[i])))
        A, B = B, A
        it += 1
    return it, diff


def damped_energy(u, v, T, k):
    # A 2-D field damped each step; its energy, summed over the whole array, bare.
    M, N = u.shape
    energy = 0.0
    for t in range(T):
        # _damped_energy_kernel0
        #pragma parallel for simd
        for i in range(1, M - 1, 1):
            i = appy.vidx(i, appy.ROW_BLOCK, M - 1)
            #pragma parallel for simd
            for j in range(1, N - 1, 1):
                j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, N - 1)
                v[i, j] = u[i, j] + k * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
        u, v = v, u
        # _damped_energy_kernel1
        #pragma parallel for
        for _energy_r0 in range(0, u.shape[0], 1):
            _energy_part = 0
            for _energy_r1_base in range(0, u.shape[1], appy.MVL):
                _energy_r1 = appy.vidx(_energy_r1_base, appy.MVL, u.shape[1])
                _energy_part = _energy_part + sum(u[_energy_r0, _energy_r1] * u[_energy_r0, _energy_r1])
            #pragma atomic
            _energy_shared[0] = _energy_shared[0] + _energy_part
    return energy


def largest_count(C, N):
    # A max over integers starts from the dtype's lowest value: exact above 2**24.
    #pragma :N=>reduce(max)
    # _largest_count_kernel0
    #pragma parallel for simd
    for _m_r0 in range(0, N, 1):
        _m_r0 = appy.vidx(_m_r0, appy.MVL, N)
        #pragma atomic
        _m_shared[0] = max(_m_shared[0], max(C[_m_r0]))
    return m
