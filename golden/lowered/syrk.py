# appyc 0.1.0 --emit lowered: samples/syrk.py after the high-level passes (assembly APPy).
"""syrk with triangular slices (NPBench syrk): C = alpha * A A^T + beta * C, lower triangle.

Exercises: slices whose bounds depend on the parallel loop variable (`C[i, :i + 1]`), an
augmented tensor statement inside a sequential inner loop, and a slice of a column (`A[:i + 1, k]`)
meeting a slice of a row in one statement.
"""
import numpy as np


def syrk(alpha, beta, C, A, N, M):
    # _syrk_kernel0
    #pragma parallel for
    for i in range(0, N, 1):
        for _i_base in range(0, i + 1, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, i + 1)
            C[i, _i] = C[i, _i] * beta
        appy.syncthreads()
        for k in range(0, M, 1):
            appy.syncthreads()
            for _i1_base in range(0, i + 1, appy.MVL):
                _i1 = appy.vidx(_i1_base, appy.MVL, i + 1)
                C[i, _i1] = C[i, _i1] + alpha * A[i, k] * A[_i1, k]
            appy.syncthreads()
