"""softmax (NPBench deep_learning/softmax): softmax over the last axis of a 4-D tensor, returned.

Math: out = exp(x - max(x)) / sum(exp(x - max(x))) along the last axis. NPBench `paper` preset:
N = 64, H = 16, SM = 512 (float32; x is N x H x SM x SM).
"""
import numpy as np


def softmax(x):
    N, H, SM, SN = x.shape
    out = np.empty_like(x)
    # One worker per row (a 3-D grid); each row is at most 512 long, so le(512) would do, but
    # the plain row slice is what a user writes first.
    #pragma parallel for
    for i in range(N):
        #pragma parallel for
        for j in range(H):
            #pragma parallel for
            for k in range(SM):
                m = np.max(x[i, j, k, :SN])
                s = np.sum(np.exp(x[i, j, k, :SN] - m))
                out[i, j, k, :SN] = np.exp(x[i, j, k, :SN] - m) / s
    return out
