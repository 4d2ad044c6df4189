"""Group-by sum (paper Listings 1 and 2).

Exercises: a private scalar read from an array (`label = labels[i]`), and `#pragma atomic` on a
row-slice update `centroids[label, :N] += X[i, :N]` (a vector of atomics per worker, auto-vectorised
slice with an explicit bound), with int64 labels; plus a per-group count with int32 labels.
"""
import numpy as np


def group_by_sum(X, labels, centroids, M, N):
    #pragma parallel for
    for i in range(M):
        label = labels[i]
        #pragma atomic
        centroids[label, :N] += X[i, :N]


def group_count(labels, counts, M):
    #pragma parallel for simd
    for i in range(M):
        #pragma atomic
        counts[labels[i]] += 1
