"""heat_3d (PolyBench / NPBench), written as APPy users write it: loops, not slices.

Math: B = A + 0.125 * (second difference of A along each of the three axes) on the interior,
then the same from B into A; TSTEPS steps. Planes and rows are workers (two nested
`parallel for`), each row vectorised (`simd`).
NPBench `paper` preset: TSTEPS = 500, N = 120 (float64, N^3 grid).
"""
import numpy as np


def heat_3d(TSTEPS, A, B):
    N = A.shape[0]
    for t in range(TSTEPS):
        #pragma parallel for
        for i in range(1, N - 1):
            #pragma parallel for
            for j in range(1, N - 1):
                #pragma simd
                for k in range(1, N - 1):
                    B[i, j, k] = (0.125 * (A[i + 1, j, k] - 2.0 * A[i, j, k] + A[i - 1, j, k])
                                  + 0.125 * (A[i, j + 1, k] - 2.0 * A[i, j, k] + A[i, j - 1, k])
                                  + 0.125 * (A[i, j, k + 1] - 2.0 * A[i, j, k] + A[i, j, k - 1])
                                  + A[i, j, k])
        #pragma parallel for
        for i in range(1, N - 1):
            #pragma parallel for
            for j in range(1, N - 1):
                #pragma simd
                for k in range(1, N - 1):
                    A[i, j, k] = (0.125 * (B[i + 1, j, k] - 2.0 * B[i, j, k] + B[i - 1, j, k])
                                  + 0.125 * (B[i, j + 1, k] - 2.0 * B[i, j, k] + B[i, j - 1, k])
                                  + 0.125 * (B[i, j, k + 1] - 2.0 * B[i, j, k] + B[i, j, k - 1])
                                  + B[i, j, k])
