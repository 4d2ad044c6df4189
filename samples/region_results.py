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
    #pragma sequential for
    for i in range(1):
        s = A[0] + 1.0
    return s


def running_product(x, N):
    p = 1.0
    #pragma sequential for
    for i in range(N):
        p = p * (1.0 + 0.01 * x[i])
    return p


def sum_into_name(A, N):
    #pragma :N=>reduce(sum)
    s = np.sum(A[:N])
    return s


def relax_tensor_test(A, B, N, tol, max_iter):
    # The test reads a reduction written in tensor form: the loop runs until it is small.
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = 0.5 * (A[i - 1] + A[i + 1])
        #pragma 1:N-1=>reduce(max)
        diff = np.max(np.abs(B[1:N - 1] - A[1:N - 1]))
        A, B = B, A
        it += 1
    return it, diff


def last_element_doubled(A, N):
    last = 0.0
    #pragma parallel for
    for i in range(N):
        A[i] = 2.0 * A[i]
        if i == N - 1:
            last = A[i]
    return last


def relax_bare_test(A, B, N, tol, max_iter):
    # The convergence test as NumPy code, no pragma: still one persistent kernel.
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = 0.5 * (A[i - 1] + A[i + 1])
        diff = np.max(np.abs(B[1:N - 1] - A[1:N - 1]))
        A, B = B, A
        it += 1
    return it, diff


def damped_energy(u, v, T, k):
    # A 2-D field damped each step; its energy, summed over the whole array, bare.
    M, N = u.shape
    energy = 0.0
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                v[i, j] = u[i, j] + k * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
        u, v = v, u
        energy = np.sum(u * u)
    return energy


def largest_count(C, N):
    # A max over integers starts from the dtype's lowest value: exact above 2**24.
    #pragma :N=>reduce(max)
    m = np.max(C[:N])
    return m
