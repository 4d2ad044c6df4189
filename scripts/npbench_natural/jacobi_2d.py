"""jacobi_2d (PolyBench / NPBench), written as APPy users write it: loops, not slices.

Math: B_ij = 0.2 * (A_ij + A_i,j-1 + A_i,j+1 + A_i+1,j + A_i-1,j) on the interior, then the same
from B into A; TSTEPS steps. One worker per row (`parallel for`), the row vectorised (`simd`).
NPBench `paper` preset: TSTEPS = 1000, N = 2800 (float64, N x N).
"""
import numpy as np


def jacobi_2d(TSTEPS, A, B):
    N = A.shape[0]
    for t in range(TSTEPS):
        #pragma parallel for
        for i in range(1, N - 1):
            #pragma simd
            for j in range(1, N - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
        #pragma parallel for
        for i in range(1, N - 1):
            #pragma simd
            for j in range(1, N - 1):
                A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + B[i + 1, j] + B[i - 1, j])
