"""jacobi_2d (PolyBench / NPBench): a 5-point averaging stencil, TSTEPS steps of two half-sweeps.

Math: B_ij = 0.2 * (A_ij + A_i,j-1 + A_i,j+1 + A_i+1,j + A_i-1,j) on the interior, then the same
from B into A. NPBench `paper` preset: TSTEPS = 1000, N = 2800 (float64, N x N).
"""
import numpy as np


def jacobi_2d(TSTEPS, A, B):
    # Rows and columns get their own names (M == N here): appyc identifies a dimension by its
    # slice, so `A[1:N-1, 1:N-1]` would be read as one (diagonal) dimension.
    M, N = A.shape
    for t in range(TSTEPS):
        # Rows are grid workers, columns a second grid dimension (vectorised by appyc).
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        B[1:M-1, 1:N-1] = 0.2 * (A[1:M-1, 1:N-1] + A[1:M-1, 0:N-2] + A[1:M-1, 2:N]
                                 + A[2:M, 1:N-1] + A[0:M-2, 1:N-1])
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        A[1:M-1, 1:N-1] = 0.2 * (B[1:M-1, 1:N-1] + B[1:M-1, 0:N-2] + B[1:M-1, 2:N]
                                 + B[2:M, 1:N-1] + B[0:M-2, 1:N-1])
