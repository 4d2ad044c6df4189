"""Elementwise math and builtins.

Exercises: np.exp/log/sqrt/abs/sin/cos/tanh, np.where, np.maximum/np.minimum, builtins
min/max/abs/float/int, float('inf'), bool arrays (read and written), int32 results.
"""
import numpy as np


def transcendental(X, Y, N):
    #pragma parallel for simd
    for i in range(N):
        x = X[i]
        Y[i] = (np.tanh(x) + np.sin(x) * np.cos(x) + np.exp(-abs(x))
                + np.sqrt(np.abs(x)) + np.log(1.0 + x * x))


def clip_where(X, Y, lo, hi, N):
    #pragma parallel for simd
    for i in range(N):
        x = X[i]
        Y[i] = np.where(x > 0.0, np.minimum(x, hi), np.maximum(x, lo))


def builtins_mix(X, I, Y, K, N):
    #pragma parallel for
    for i in range(N):
        Y[i] = float(I[i]) * 0.5 + min(X[i], 1.0) - max(X[i], -1.0) + abs(X[i])
        K[i] = int(X[i] * 4.0)


def mask_ops(X, mask, Y, pos, N):
    #pragma parallel for simd
    for i in range(N):
        Y[i] = np.where(mask[i], X[i], -X[i])
        pos[i] = X[i] > 0.0


def inf_cap(X, Y, N):
    #pragma parallel for simd
    for i in range(N):
        Y[i] = np.where(X[i] > 1.0, float('inf'), X[i])


def counts_as_floats(K, D, Y, Z, n):
    # Integer arrays meeting a float literal or a true division compute in float64 in NumPy,
    # whatever the arrays' widths; the destination's dtype then rounds once.
    #pragma parallel for simd
    for i in range(n):
        Y[i] = K[i] * 0.1 + K[i] / D[i]
        Z[i] = 2.5 - K[i] / n
