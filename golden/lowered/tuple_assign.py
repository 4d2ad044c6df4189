# appyc 0.1.0 --emit lowered: samples/tuple_assign.py after the high-level passes (assembly APPy).
"""Tuple assignments in kernels and scalars computed on the host by reductions.

Exercises: `lo, hi = ptr[r], ptr[r + 1]` as loop bounds, `acc, n = 0.0, 0`, a swap `a, b = b,
a` (values are read before any target is assigned, as Python does), and host reductions
(`top = pos.max()`, a 0-d tensor on the torch side) passed to a kernel as scalars.
"""
import numpy as np


def csr_rows(vals, ptr, cols, v, nrows, out):
    # _csr_rows_kernel0
    #pragma parallel for
    for r in range(0, nrows, 1):
        lo = ptr[r]
        hi = ptr[r + 1]
        acc = 0.0
        for _k_base in range(lo, hi, appy.MVL):
            k = appy.vidx(_k_base, appy.MVL, hi)
            acc = acc + sum(vals[k] * v[cols[k]])
        out[r] = acc


def ordered_pairs(a, b, n):
    # _ordered_pairs_kernel0
    #pragma parallel for
    for i in range(0, n, 1):
        lo = a[i]
        hi = b[i]
        if lo > hi:
            _swap = hi
            _swap1 = lo
            lo = _swap
            hi = _swap1
        appy.syncthreads()
        a[i] = lo
        appy.syncthreads()
        b[i] = hi


def binned_mean(vals, pos, nbins):
    top = pos.max()
    out = torch.zeros(nbins, dtype=torch.float64, device=vals.device)
    # _binned_mean_kernel0
    #pragma parallel for
    for b in range(0, nbins, 1):
        left = top * b / nbins
        right = top * (b + 1) / nbins
        acc = 0.0
        n = 0
        for _j_base in range(0, pos.shape[0], appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, pos.shape[0])
            inside = (left <= pos[j]) & (pos[j] < right)
            acc = acc + sum(vals[j] if inside else 0.0)
            n = n + sum(1 if inside else 0)
        out[b] = acc / max(n, 1)
    return out


def scale_by_norm(x, y):
    # A 0-d result of a host reduction, read by every worker.
    norm = torch.sqrt(torch.sum(x * x))
    # _scale_by_norm_kernel0
    #pragma parallel for simd
    for i in range(0, x.shape[0], 1):
        i = appy.vidx(i, appy.MVL, x.shape[0])
        y[i] = x[i] / norm
