# appyc 0.1.0 --emit lowered: samples/atomic_minmax_hist.py after the high-level passes (assembly APPy).
"""Atomic max/min scatters and integer histograms.

Exercises: `#pragma atomic` on `out[k] = max(out[k], v)`, on `out[k] = np.minimum(out[k], v)`,
on an int32 `min(...)`, and `hist[bins[i]] += 1` with int32 and int64 counters, both from plain
`parallel for` workers and from `parallel for simd` vectors (lanes of a vector may hit the same
bin).
"""
import numpy as np


def scatter_max(keys, vals, out, N):
    # _scatter_max_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        k = keys[i]
        #pragma atomic
        out[k] = max(out[k], vals[i])


def scatter_min_simd(keys, vals, out, N):
    # _scatter_min_simd_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        #pragma atomic
        out[keys[i]] = np.minimum(out[keys[i]], vals[i])


def scatter_min_int(keys, ivals, out, N):
    # _scatter_min_int_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        k = keys[i]
        #pragma atomic
        out[k] = min(out[k], ivals[i])


def histogram(bins, hist, N):
    # _histogram_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        #pragma atomic
        hist[bins[i]] = hist[bins[i]] + 1


def histogram64(bins, hist, N):
    # _histogram64_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        b = bins[i]
        #pragma atomic
        hist[b] = hist[b] + 1
