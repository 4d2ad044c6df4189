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
    #pragma parallel for simd
    for i in range(N):
        B[i] = 2.0 * A[i] + 1.0
    s = 0.0
    #pragma parallel for simd reduction(+:s)
    for i in range(N):
        s += B[i] * A[i]
    return s


def relax_2d_tol(A, B, tol, max_iter):
    M, N = A.shape
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        diff = np.max(np.abs(B[1:M - 1, 1:N - 1] - A[1:M - 1, 1:N - 1]))
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
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        diff = np.max(np.abs(B[1:-1, 1:-1] - A[1:-1, 1:-1]))
        A, B = B, A
        it += 1
    return it, diff


def shifted_max(A, B, N):
    #pragma parallel for simd
    for i in range(1, N - 1):
        B[i] = A[i - 1] - A[i + 1]
    m = float("-inf")
    #pragma parallel for simd reduction(max:m)
    for k in range(0, N - 2):
        m = max(m, B[k + 1] * A[k + 1])
    return m


def neighbour_sum(A, B, N):
    #pragma parallel for simd
    for i in range(N - 1):
        B[i] = A[i] + A[i + 1]
    s = 0.0
    #pragma parallel for simd reduction(+:s)
    for i in range(N - 1):
        s += B[i] * B[i + 1]
    return s


def residual(A, B, R, N):
    #pragma parallel for simd
    for i in range(N - 1):
        B[i] = 0.5 * (A[i] + A[i + 1])
    #pragma parallel for simd
    for i in range(N - 1):
        R[i] = B[i] - A[i]


def copied_back(A, B, N):
    # The second loop writes A, which the first reads at i + 1: two passes.
    #pragma parallel for simd
    for i in range(N - 1):
        B[i] = A[i] + A[i + 1]
    #pragma parallel for simd
    for i in range(N - 1):
        A[i] = 0.5 * B[i]


def decayed_energy(u, v, T, N):
    scale = 1.0
    e = 0.0
    for t in range(T):
        #pragma parallel for simd
        for i in range(N):
            v[i] = scale * (u[i] + v[i])
        scale = scale * 0.5
        e = np.sum(v[:N] * v[:N])
    return e, scale


def stored_then_read(A, C, D, N):
    # C is an integer array: what the second statement reads back is the stored, truncated
    # value (passes/forward_stores.rs keeps it in a register in C's dtype), not A[i] * 1.5.
    #pragma parallel for simd
    for i in range(N):
        C[i] = A[i] * 1.5
        D[i] = C[i] * 2.0
