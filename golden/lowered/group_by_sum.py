# appyc 0.1.0 --emit lowered: samples/group_by_sum.py after the high-level passes (assembly APPy).
"""Group-by sum (paper Listings 1 and 2).

Exercises: a private scalar read from an array (`label = labels[i]`), and `#pragma atomic` on a
row-slice update `centroids[label, :N] += X[i, :N]` (a vector of atomics per worker, auto-vectorised
slice with an explicit bound), with int64 labels; plus a per-group count with int32 labels.
"""
import numpy as np


def group_by_sum(X, labels, centroids, M, N):
    # _group_by_sum_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        label = labels[i]
        for _i_base in range(0, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            #pragma atomic
            centroids[label, _i] = centroids[label, _i] + X[i, _i]


def group_count(labels, counts, M):
    # _group_count_kernel0
    #pragma parallel for simd
    for i in range(0, M, 1):
        i = appy.vidx(i, appy.MVL, M)
        #pragma atomic
        counts[labels[i]] = counts[labels[i]] + 1
