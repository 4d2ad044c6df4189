"""Time loops written the way APPy users write them, each run as one persistent kernel.

Exercises: a bare host slice assignment in a time loop (fdtd_2d's `ey[0, :] = fict[t]`) and bare
element assignments (boundary copies), which become regions of their own
(passes/device_statements.rs) so the loop stays on the device.
"""
import numpy as np


def yee_natural(ex, ey, hz, fict, T):
    # fdtd_2d as APPy's port writes it: the source row is a bare line.
    for t in range(T):
        ey[0, :] = fict[t]
        #pragma 1:ey.shape[0]=>parallel :ey.shape[1]=>parallel
        ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
        #pragma :ex.shape[0]=>parallel 1:ex.shape[1]=>parallel
        ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
        #pragma :hz.shape[0]-1=>parallel :hz.shape[1]-1=>parallel
        hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def reflecting_ends(A, B, N, T):
    # A 1-D smoothing whose ends copy their neighbours each step (bare element assignments),
    # and a bare slice copy back.
    for t in range(T):
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
        B[0] = B[1]
        B[N - 1] = B[N - 2]
        A[:] = B
