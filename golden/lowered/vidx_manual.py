# appyc 0.1.0 --emit lowered: samples/vidx_manual.py after the high-level passes (assembly APPy).
"""Assembly-level programming with `appy.MVL` and `appy.vidx` (manual strip-mining).

Exercises: a parallel loop over strips `range(0, N, appy.MVL)` with `vi = appy.vidx(...)` vector
indices, and a per-row strip-mined loop `y[i, vj] = ...` inside a parallel loop.
"""
import numpy as np
import appy


def vadd_strips(A, B, C, N):
    # _vadd_strips_kernel0
    #pragma parallel for
    for i0 in range(0, N, appy.MVL):
        vi = appy.vidx(i0, appy.MVL, N)
        C[vi] = A[vi] + B[vi]


def row_scale(A, s, y, M, N):
    # _row_scale_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        for j0 in range(0, N, appy.MVL):
            vj = appy.vidx(j0, appy.MVL, N)
            y[i, vj] = A[i, vj] * s[i] + 1.0
