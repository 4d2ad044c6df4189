import numpy as np


def f(A, N):
    B = np.linalg.norm(A)
    #pragma parallel for
    for i in range(N):
        A[i] = A[i] / B
