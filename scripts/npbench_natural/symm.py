"""symm (PolyBench / NPBench), written as APPy users write it: a host loop over the rows of the
symmetric matrix, one `parallel for` over the columns in it, a bare row update after it.

Math: C = alpha * S B + beta * C, S symmetric with its lower triangle stored in A (A's upper
part is never read). Row i of the loop adds row i's contribution to the rows above it
(C[k, :] += alpha * B[i, :] * A[i, k], k < i) and sums column j of B above row i against A's
row i for C[i, :] itself; the work grows with i (a triangle).
NPBench `paper` preset: M = 1000, N = 1200 (float64).
"""
import numpy as np


def symm(alpha, beta, C, A, B):
    temp2 = np.empty((C.shape[1],), dtype=C.dtype)
    C *= beta
    for i in range(C.shape[0]):
        #pragma parallel for
        for j in range(C.shape[1]):
            acc = 0.0
            #pragma simd
            for k in range(i):
                C[k, j] += alpha * B[i, j] * A[i, k]
                acc += B[k, j] * A[i, k]
            temp2[j] = acc
        C[i, :] += alpha * B[i, :] * A[i, i] + alpha * temp2
    return C
