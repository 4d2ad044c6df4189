"""Square arrays sliced with one bound in every dimension (`A[:N, :N]`).

Exercises: two dimensions of one statement named by the same slice. Each is a dimension of its
own: a `parallel` pragma on `:N` makes the first of them the grid and the second a vector loop
(square_scale), two `parallel` items make both grid dimensions (square_grid), and a reduced
`:N` is the contracted dimension, not the diagonal (square_matvec).
"""
import numpy as np


def square_scale(A, B, N):
    #pragma :N=>parallel
    B[:N, :N] = 2.0 * A[:N, :N] + 1.0


def square_grid(A, B, N):
    #pragma :N=>parallel :N=>parallel
    B[:N, :N] = A[:N, :N] - 0.5


def square_matvec(A, x, y, N):
    #pragma :N=>parallel :N=>reduce(sum)
    y[:N] = A[:N, :N] @ x[:N]
