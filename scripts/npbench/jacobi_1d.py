"""jacobi_1d (PolyBench / NPBench): a 3-point averaging stencil, TSTEPS steps of two half-sweeps.

Math: B_i = (A_{i-1} + A_i + A_{i+1}) * 0.33333 on the interior, then the same from B into A.
NPBench `paper` preset: TSTEPS = 4000, N = 32000 (float64).
"""
import numpy as np


def jacobi_1d(TSTEPS, A, B):
    N = A.shape[0]
    # The host time loop is plain Python: appyc may turn it into one persistent kernel.
    for t in range(TSTEPS):
        #pragma 1:N-1=>parallel
        B[1:N-1] = 0.33333 * (A[0:N-2] + A[1:N-1] + A[2:N])
        #pragma 1:N-1=>parallel
        A[1:N-1] = 0.33333 * (B[0:N-2] + B[1:N-1] + B[2:N])
