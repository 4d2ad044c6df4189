# appyc 0.1.0 --emit lowered: samples/row_max_negative.py after the high-level passes (assembly APPy).
"""Row-wise max/min reductions over rows whose length is not a multiple of the vector length.

Exercises: `m = float('-inf')` / `float('inf')` initial values, `m = max(m, A[i, j])`,
`m = np.maximum(...)`, `m = min(...)`, `m = np.minimum(...)` inside `#pragma simd` loops (masked-off
lanes must not contribute: the harness feeds all-negative rows), and a negative constant index
`A[i, -1]`.
"""
import numpy as np


def row_max(A, out, M, N):
    # _row_max_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        m = float('-inf')
        for _j_base in range(0, N, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, N)
            m = max(m, max(A[i, j]))
        out[i] = m


def row_range(A, out, M, N):
    # _row_range_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        hi = float('-inf')
        lo = float('inf')
        for _j_base in range(0, N, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, N)
            hi = max(hi, max(A[i, j]))
            lo = min(lo, min(A[i, j]))
        out[i] = hi - lo


def row_min_minus_last(A, out, M, N):
    # _row_min_minus_last_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        m = float('inf')
        for _j_base in range(0, N, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, N)
            m = min(m, min(A[i, j]))
        out[i] = m - A[i, A.shape[1] - 1]
