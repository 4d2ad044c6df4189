"""syrk with triangular slices (NPBench syrk): C = alpha * A A^T + beta * C, lower triangle.

Exercises: slices whose bounds depend on the parallel loop variable (`C[i, :i + 1]`), an
augmented tensor statement inside a sequential inner loop, and a slice of a column (`A[:i + 1, k]`)
meeting a slice of a row in one statement.
"""
import numpy as np


def syrk(alpha, beta, C, A, N, M):
    #pragma parallel for
    for i in range(N):
        C[i, :i + 1] *= beta
        for k in range(M):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]
