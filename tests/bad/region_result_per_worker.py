import numpy as np


def row_sums(A, out, M, N):
    #pragma parallel for
    for i in range(M):
        s = 0.0
        for j in range(N):
            s += A[i, j]
        out[i] = s
    return s
