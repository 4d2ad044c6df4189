"""Row-wise max/min reductions over rows whose length is not a multiple of the vector length.

Exercises: `m = float('-inf')` / `float('inf')` initial values, `m = max(m, A[i, j])`,
`m = np.maximum(...)`, `m = min(...)`, `m = np.minimum(...)` inside `#pragma simd` loops (masked-off
lanes must not contribute: the harness feeds all-negative rows), and a negative constant index
`A[i, -1]`.
"""
import numpy as np


def row_max(A, out, M, N):
    #pragma parallel for
    for i in range(M):
        m = float('-inf')
        #pragma simd
        for j in range(N):
            m = max(m, A[i, j])
        out[i] = m


def row_range(A, out, M, N):
    #pragma parallel for
    for i in range(M):
        hi = float('-inf')
        lo = float('inf')
        #pragma simd
        for j in range(N):
            hi = np.maximum(hi, A[i, j])
            lo = np.minimum(lo, A[i, j])
        out[i] = hi - lo


def row_min_minus_last(A, out, M, N):
    #pragma parallel for
    for i in range(M):
        m = float('inf')
        #pragma simd
        for j in range(N):
            m = min(m, A[i, j])
        out[i] = m - A[i, -1]
