# appyc 0.1.0 --emit lowered: samples/softmax_loops.py after the high-level passes (assembly APPy).
"""Row softmax in loop form (paper Listing 6, loop-oriented version).

Exercises: three `#pragma simd` loops in one parallel worker: a max reduction with
`np.maximum` from `float('-inf')`, a sum reduction of `np.exp`, and a vector store that uses both
private scalars.
"""
import numpy as np


def softmax(a, b, M, N):
    # _softmax_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        m = float('-inf')
        for _j_base in range(0, N, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, N)
            m = max(m, max(a[i, j]))
        s = 0.0
        for _j_base1 in range(0, N, appy.MVL):
            j = appy.vidx(_j_base1, appy.MVL, N)
            s = s + sum(np.exp(a[i, j] - m))
        for _j_base2 in range(0, N, appy.MVL):
            j = appy.vidx(_j_base2, appy.MVL, N)
            b[i, j] = np.exp(a[i, j] - m) / s
