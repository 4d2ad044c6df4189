import numpy as np


def f(A, B, M, N):
    #pragma parallel for
    for i in range(M):
        B[i, :N] = np.sort(A[i, :N])
