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


def outer_tile(x, y, C, M, N):
    #pragma :M=>simd :N=>simd
    C[:M, :N] = x[:M, None] * y[None, :N] + C[:M, :N]
