"""Tuple assignments in kernels and scalars computed on the host by reductions.

Exercises: `lo, hi = ptr[r], ptr[r + 1]` as loop bounds, `acc, n = 0.0, 0`, a swap `a, b = b,
a` (values are read before any target is assigned, as Python does), and host reductions
(`top = pos.max()`, a 0-d tensor on the torch side) passed to a kernel as scalars.
"""
import numpy as np


def csr_rows(vals, ptr, cols, v, nrows, out):
    #pragma parallel for
    for r in range(nrows):
        lo, hi = ptr[r], ptr[r + 1]
        acc = 0.0
        #pragma simd
        for k in range(lo, hi):
            acc += vals[k] * v[cols[k]]
        out[r] = acc


def ordered_pairs(a, b, n):
    #pragma parallel for
    for i in range(n):
        lo, hi = a[i], b[i]
        if lo > hi:
            lo, hi = hi, lo
        a[i], b[i] = lo, hi


def binned_mean(vals, pos, nbins):
    top = pos.max()
    out = np.zeros(nbins, dtype=np.float64)
    #pragma parallel for
    for b in range(nbins):
        left, right = top * b / nbins, top * (b + 1) / nbins
        acc, n = 0.0, 0
        #pragma simd
        for j in range(pos.shape[0]):
            inside = (left <= pos[j]) & (pos[j] < right)
            acc += vals[j] if inside else 0.0
            n += 1 if inside else 0
        out[b] = acc / max(n, 1)
    return out


def scale_by_norm(x, y):
    # A 0-d result of a host reduction, read by every worker.
    norm = np.sqrt(np.sum(x * x))
    #pragma parallel for simd
    for i in range(x.shape[0]):
        y[i] = x[i] / norm
