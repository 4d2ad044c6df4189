"""Softmax in tensor form (paper Listing 6, second version, and the B.3 limitation lifted).

Exercises: reductions of a row slice into worker-private scalars (`np.max`, `np.sum`, `.sum()`)
inside a parallel loop, and a function-level softmax whose reductions sit inside the
expression (`... / np.sum(..., axis=1)[:, None]`), split into their own statements.
"""
import numpy as np


def softmax(a, b, M, N):
    #pragma parallel for
    for i in range(M):
        m = np.max(a[i, :N])
        s = np.sum(np.exp(a[i, :N] - m))
        b[i, :N] = np.exp(a[i, :N] - m) / s


def softmax_rows(a, b, M, N):
    #pragma :M=>parallel :N=>simd
    b[:M, :N] = np.exp(a[:M, :N] - np.max(a[:M, :N], axis=1)[:, None])
    #pragma :M=>parallel
    b[:M, :N] = b[:M, :N] / b[:M, :N].sum(axis=1)[:, None]


def softmax_short_rows(a, b, M, N):
    # Rows of at most 1024 elements: each is one vector, no strip loop (checked at launch).
    #pragma :M=>parallel :N=>le(1024)
    b[:M, :N] = np.exp(a[:M, :N] - np.max(a[:M, :N], axis=1)[:, None])
    #pragma :M=>parallel :N=>le(1024)
    b[:M, :N] = b[:M, :N] / np.sum(b[:M, :N], axis=1)[:, None]
