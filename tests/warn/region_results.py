import numpy as np


def forgot_the_clause(A, N):
    s = 0.0
    #pragma parallel for
    for i in range(N):
        s += A[i]
    return s


def every_worker_stores(A, N):
    last = 0.0
    #pragma parallel for
    for i in range(N):
        last = A[i]
    return last
