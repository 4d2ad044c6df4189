"""Broadcast outer products: `x[:M, None] * y[None, :N]`.

Exercises: `None` axes in sliced index notation at function level, with `=` and `+=`.
"""
import numpy as np


def outer(x, y, C, M, N):
    #pragma :M=>parallel :N=>simd
    C[:M, :N] = x[:M, None] * y[None, :N]


def rank1_update(alpha, x, y, C, M, N):
    #pragma :M=>parallel :N=>simd
    C[:M, :N] += alpha * x[:M, None] * y[None, :N]



def batched_outer(x, y, C, B, M, N):
    # One 2-D tile (8 rows x MVL columns) per strip, one batch per worker.
    #pragma :B=>parallel :M=>simd(8) :N=>simd
    C[:B, :M, :N] = x[:B, :M, None] * y[:B, None, :N] + C[:B, :M, :N]
