"""go_fast (NPBench / Numba's example): trace of tanh of the diagonal, added to every element.

Math: t = sum_i tanh(a_ii); return a + t. NPBench `paper` preset: N = 12500 (float64, N x N).
"""
import numpy as np


def go_fast(a):
    N = a.shape[0]
    # The paper's reduction idiom: a one-element array updated atomically.
    trace = np.zeros(1)
    #pragma parallel for simd
    for i in range(N):
        #pragma atomic
        trace[0] += np.tanh(a[i, i])
    out = np.empty_like(a)
    #pragma parallel for
    for i in range(N):
        out[i, :N] = a[i, :N] + trace[0]
    return out
