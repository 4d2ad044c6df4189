# appyc 0.1.0 --emit lowered: samples/sequential_prefix.py after the high-level passes (assembly APPy).
"""Loop-carried dependences with `#pragma sequential for` (one worker runs all iterations).

Exercises: a parallel copy followed by a sequential prefix sum in the same function (two kernels
in order), and a first-order linear recurrence x[i] = x[i - 1] * a[i] + b[i].
"""
import numpy as np


def prefix_sum(x, out, N):
    # _prefix_sum_kernel0
    #pragma parallel for simd
    for i in range(0, N, 1):
        i = appy.vidx(i, appy.MVL, N)
        out[i] = x[i]
    # _prefix_sum_kernel1
    #pragma sequential for
    for i in range(1, N, 1):
        appy.syncthreads()
        out[i] = out[i] + out[i - 1]
        appy.syncthreads()


def linear_recurrence(a, b, x, N):
    # _linear_recurrence_kernel0
    #pragma sequential for
    for i in range(1, N, 1):
        appy.syncthreads()
        x[i] = x[i - 1] * a[i] + b[i]
        appy.syncthreads()
