"""APPy 0.3's `shared(x)`: scalars that all iterations of a `parallel for` share.

Exercises: sum, max and min reductions across workers (`+=`, `-=`, `max(...)`, `np.minimum`),
a conditional update in a loop without `simd`, a ternary update, an int counter, a read-only
shared scalar, a plain store from one iteration, an update inside an inner `simd` loop, and an
empty loop (the value stays what it was). After the loop the scalar is a Python number again.
"""
import numpy as np


def total(x):
    acc = 0.0
    #pragma parallel for simd shared(acc)
    for i in range(x.shape[0]):
        acc += x[i]
    return acc


def total_from(x, start, n):
    # The buffer starts at the host's value; an empty loop leaves it alone.
    acc = start
    #pragma parallel for simd shared(acc)
    for i in range(n):
        acc -= x[i] * x[i]
    return acc


def largest(x):
    best = -np.inf
    #pragma parallel for simd shared(best)
    for i in range(x.shape[0]):
        best = max(best, x[i])
    return best


def smallest(x):
    low = np.inf
    #pragma parallel for simd shared(low)
    for i in range(x.shape[0]):
        low = np.minimum(low, x[i])
    return low


def masked_total(x, keep):
    acc = 0.0
    #pragma parallel for shared(acc)
    for i in range(x.shape[0]):
        if keep[i] > 0:
            acc += x[i]
    return acc


def count_positive(x):
    n = 0
    #pragma parallel for simd shared(n)
    for i in range(x.shape[0]):
        n += 1 if x[i] > 0 else 0
    return n


def midpoint_integral(steps, width):
    # `width` is shared but only read: every worker sees the host's value.
    area = 0.0
    #pragma parallel for simd shared(area, width)
    for i in range(steps):
        t = (i + 0.5) * width
        area += 4.0 / (1.0 + t * t)
    return area * width


def flag_index(x, k):
    # One iteration stores: no race, and the host sees its value.
    found = -1
    #pragma parallel for shared(found)
    for i in range(x.shape[0]):
        if i == k:
            found = i
    return found


def frobenius_squared(A):
    acc = 0.0
    #pragma parallel for shared(acc)
    for i in range(A.shape[0]):
        #pragma simd
        for j in range(A.shape[1]):
            acc += A[i, j] * A[i, j]
    return acc
