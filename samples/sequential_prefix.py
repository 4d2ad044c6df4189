"""Loop-carried dependences with `#pragma sequential for` (one worker runs all iterations).

Exercises: a parallel copy followed by a sequential prefix sum in the same function (two kernels
in order), and a first-order linear recurrence x[i] = x[i - 1] * a[i] + b[i].
"""
import numpy as np


def prefix_sum(x, out, N):
    #pragma parallel for simd
    for i in range(N):
        out[i] = x[i]
    #pragma sequential for
    for i in range(1, N):
        out[i] = out[i] + out[i - 1]


def linear_recurrence(a, b, x, N):
    #pragma sequential for
    for i in range(1, N):
        x[i] = x[i - 1] * a[i] + b[i]
