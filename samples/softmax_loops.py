"""Row softmax in loop form (paper Listing 6, loop-oriented version).

Exercises: three `#pragma simd` loops in one parallel worker: a max reduction with
`np.maximum` from `float('-inf')`, a sum reduction of `np.exp`, and a vector store that uses both
private scalars.
"""
import numpy as np


def softmax(a, b, M, N):
    #pragma parallel for
    for i in range(M):
        m = float('-inf')
        #pragma simd
        for j in range(N):
            m = np.maximum(m, a[i, j])

        s = 0.0
        #pragma simd
        for j in range(N):
            s += np.exp(a[i, j] - m)

        #pragma simd
        for j in range(N):
            b[i, j] = np.exp(a[i, j] - m) / s
