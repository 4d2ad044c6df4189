# appyc 0.1.0 --emit lowered: samples/joined_regions.py after the high-level passes (assembly APPy).
"""A loop that reads back what the loop before it wrote, as one region with it
(passes/join_regions.rs).

Joined: a sum written as its own `parallel for` after the loop that fills its operand (one
launch), a 2-D relaxation whose convergence test is NumPy code (one phase a sweep of its
persistent kernel), a reduction whose loop is numbered from 0 over elements the first loop
numbers from 1, a residual stored from the values just computed, and an energy whose loop
moves up past a host update the first loop reads. Not joined, and still right: a reduction that
reads a neighbour's element, and a loop that writes what the first reads at a neighbour. And an
element read right after its store (passes/forward_stores.rs) reads the stored value in the
array's dtype: an integer array's truncation.
"""
import numpy as np


def filled_dot(A, B, N):
    # appyc: this region runs inside _filled_dot_kernel0 below
    s = 0.0
    # _filled_dot_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        _B_stored = B.dtype.type(2.0 * A[i] + 1.0)
        B[i] = _B_stored
        #pragma atomic
        _s_shared[0] = _s_shared[0] + sum(_B_stored * A[i])
    return s


def relax_2d_tol(A, B, tol, max_iter):
    M, N = A.shape
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        # appyc: this region runs inside _relax_2d_tol_kernel0 below
        # _relax_2d_tol_kernel0
        #pragma parallel for
        for i in range(1, M - 1, 1):
            _diff_part = float('-inf')
            for _j_base in range(1, N - 1, appy.MVL):
                j = appy.vidx(_j_base, appy.MVL, N - 1)
                _B_stored = B.dtype.type(0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1]))
                B[i, j] = _B_stored
                _diff_part = max(_diff_part, max(np.abs(_B_stored - A[i, j])))
            #pragma atomic
            _diff_shared[0] = max(_diff_shared[0], _diff_part)
        A, B = B, A
        it += 1
    return it, diff


def relax_2d_open_slices(A, B, tol, max_iter):
    # The same test over open slices, as NumPy users write it: B's sizes are checked against
    # A's at the launch, and with `M, N = A.shape` bound once and the arrays only swapped, the
    # test's ranges are the sweep's, so it still joins the sweep.
    M, N = A.shape
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        # appyc: this region runs inside _relax_2d_open_slices_kernel0 below
        # _relax_2d_open_slices_kernel0
        #pragma parallel for
        for i in range(1, M - 1, 1):
            _diff_part = float('-inf')
            for _j_base in range(1, N - 1, appy.MVL):
                j = appy.vidx(_j_base, appy.MVL, N - 1)
                _B_stored = B.dtype.type(0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1]))
                B[i, j] = _B_stored
                _diff_part = max(_diff_part, max(np.abs(_B_stored - A[i, j])))
            #pragma atomic
            _diff_shared[0] = max(_diff_shared[0], _diff_part)
        A, B = B, A
        it += 1
    return it, diff


def shifted_max(A, B, N):
    # appyc: this region runs inside _shifted_max_kernel0 below
    m = float("-inf")
    # _shifted_max_kernel0
    #pragma parallel for simd
    for i in range(1, N - 1, 1):
        i = appy.vidx(i, appy.MVL, N - 1)
        _B_stored = B.dtype.type(A[i - 1] - A[i + 1])
        B[i] = _B_stored
        #pragma atomic
        _m_shared[0] = max(_m_shared[0], max(_B_stored * A[i]))
    return m


def neighbour_sum(A, B, N):
    # _neighbour_sum_kernel0
    #pragma parallel for simd
    for i in range(0, N - 1, 1):
        i = appy.vidx(i, appy.MVL, N - 1)
        B[i] = A[i] + A[i + 1]
    s = 0.0
    # _neighbour_sum_kernel1
    #pragma parallel for simd
    for i in range(0, N - 1, 1):
        i = appy.vidx(i, appy.MVL, N - 1)
        #pragma atomic
        _s_shared[0] = _s_shared[0] + sum(B[i] * B[i + 1])
    return s


def residual(A, B, R, N):
    # appyc: this region runs inside _residual_kernel0 below
    # _residual_kernel0
    #pragma parallel for simd
    for i in range(0, N - 1, 1):
        i = appy.vidx(i, appy.MVL, N - 1)
        _B_stored = B.dtype.type(0.5 * (A[i] + A[i + 1]))
        B[i] = _B_stored
        R[i] = _B_stored - A[i]


def copied_back(A, B, N):
    # The second loop writes A, which the first reads at i + 1: two passes.
    # _copied_back_kernel0
    #pragma parallel for simd
    for i in range(0, N - 1, 1):
        i = appy.vidx(i, appy.MVL, N - 1)
        B[i] = A[i] + A[i + 1]
    # _copied_back_kernel1
    #pragma parallel for simd
    for i in range(0, N - 1, 1):
        i = appy.vidx(i, appy.MVL, N - 1)
        A[i] = 0.5 * B[i]


def decayed_energy(u, v, T, N):
    scale = 1.0
    e = 0.0
    for t in range(T):
        # _decayed_energy_kernel0
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            _v_stored = v.dtype.type(scale * (u[i] + v[i]))
            v[i] = _v_stored
            #pragma atomic
            _e_shared[0] = _e_shared[0] + sum(_v_stored * _v_stored)
        scale = scale * 0.5
        # appyc: this region runs inside _decayed_energy_kernel0 above
    return e, scale


def stored_then_read(A, C, D, N):
    # C is an integer array: what the second statement reads back is the stored, truncated
    # value (passes/forward_stores.rs keeps it in a register in C's dtype), not A[i] * 1.5.
    # _stored_then_read_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        _C_stored = C.dtype.type(A[i] * 1.5)
        C[i] = _C_stored
        D[i] = _C_stored * 2.0
