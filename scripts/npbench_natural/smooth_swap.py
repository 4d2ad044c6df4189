"""smooth_swap: a 2-D 5-point smoothing in two buffers swapped every step.

Math per step: B_ij = 0.2 * (A_ij + A_i-1,j + A_i+1,j + A_i,j-1 + A_i,j+1) on the interior, B's
boundary copied from A (so the swap keeps the boundary), then `A, B = B, A`. The result is
whichever buffer `A` names after the loop: it is returned.
`paper`: 4096 x 4096 (float64), T = 200 steps.
"""
import numpy as np


def smooth_swap(T, A, B):
    M, N = A.shape
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        B[0, :] = A[0, :]
        B[M - 1, :] = A[M - 1, :]
        B[:, 0] = A[:, 0]
        B[:, N - 1] = A[:, N - 1]
        A, B = B, A
    return A
