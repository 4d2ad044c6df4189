"""Host tensor code around a kernel: what stays in torch at function level.

Exercises: unannotated function-level tensor statements (a slice update, `np.sum(..., axis=1)`,
`np.maximum` with a scalar) and a matrix-matrix product `@`, all left as torch operations on the
device, next to a dimension-pragma kernel that uses their results.
"""
import numpy as np


def scale_product(A, B, w, M, N):
    s = np.sum(A, axis=1) + 1.0
    s[1:-1] = 0.5 * (s[2:] + s[:-2])
    C = A @ B
    C = np.maximum(C, -1.0)
    #pragma :M=>parallel :N=>simd
    C[:M, :N] = C[:M, :N] / np.abs(s[:M, None]) + w[None, :N]
    return C
