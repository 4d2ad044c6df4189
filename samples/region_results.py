"""Scalars a region computes and the host reads after it, as the sequential program leaves them.

Exercises (passes/live_out.rs): a `sequential for` that computes a value, one that updates it
in its loop, a reduction into a name under a dimension pragma (the name bound by the region
first), a convergence loop whose `while` tests such a reduction, and a `parallel for` whose one
iteration that passes a test stores the result.
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
