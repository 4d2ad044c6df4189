"""gramschmidt (PolyBench / NPBench): QR factorisation by (modified) Gram-Schmidt, A = Q R.

Math for each column k: R_kk = |a_k|, q_k = a_k / R_kk, then for every later column j:
R_kj = q_k . a_j and a_j -= q_k R_kj (A is overwritten). NPBench `paper` preset: M = 240, N = 200
(float64; A is M x N).
"""
import numpy as np


def gramschmidt(A):
    M, N = A.shape
    Q = np.zeros((M, N))
    R = np.zeros((N, N))
    for k in range(N):
        # A column norm: one worker reduces the column.
        #pragma :M=>reduce(sum)
        R[k, k] = np.sqrt(np.sum(A[:M, k] * A[:M, k]))
        #pragma :M=>parallel
        Q[:M, k] = A[:M, k] / R[k, k]
        # Every later column is projected out by its own worker.
        #pragma parallel for
        for j in range(k + 1, N):
            R[k, j] = np.sum(Q[:M, k] * A[:M, j])
            A[:M, j] -= Q[:M, k] * R[k, j]
    return Q, R
