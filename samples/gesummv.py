"""gesummv (paper Listing 8): y = alpha * A x + beta * B x.

Exercises: matrix-vector products `@` as reductions fused with the element-wise scaling
(`reduction(sum:y)` / `reduce(sum)` on the contracted dimension), `+=` of a tensor statement, and
one statement with two reductions inside a larger expression, split automatically.
"""
import numpy as np


def gesummv(alpha, beta, A, B, x, y, tmp, M, N):
    #pragma :M=>parallel :N=>reduction(sum:y)
    y[:M] = alpha * A[:M, :N] @ x[:N]
    #pragma :M=>parallel :N=>reduce(sum:tmp)
    tmp[:M] = beta * B[:M, :N] @ x[:N]
    #pragma :M=>parallel
    y[:M] += tmp[:M]


def gesummv_one_statement(alpha, beta, A, B, x, y, M, N):
    #pragma :M=>parallel
    y[:M] = alpha * (A[:M, :N] @ x[:N]) + beta * np.dot(B[:M, :N], x[:N])
