import numpy as np


def f(A, r, M, N):
    #pragma :M=>reduce(sum) :N=>reduce(sum)
    r[:M] = np.sum(A[:M, :N], axis=1)
