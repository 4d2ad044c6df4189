"""Jacobi 2-D stencil in sliced index notation (paper Listing 7, PolyBench jacobi_2d).

Exercises: function-level tensor statements with dimension pragmas inside a host time loop;
shifted slices of one dimension (`:N-2`, `1:N-1`, `2:N`); both dimensions `parallel` (the inner
one is vectorised by the compiler), and `parallel` + `simd`.
"""
import numpy as np


def jacobi_2d(A, B, M, N, T):
    for t in range(T):
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        B[1:M-1, 1:N-1] = 0.2 * (A[1:M-1, 1:N-1] + A[1:M-1, :N-2] + A[1:M-1, 2:N]
                                 + A[2:M, 1:N-1] + A[0:M-2, 1:N-1])
        #pragma 1:M-1=>parallel 1:N-1=>simd
        A[1:M-1, 1:N-1] = 0.2 * (B[1:M-1, 1:N-1] + B[1:M-1, :N-2] + B[1:M-1, 2:N]
                                 + B[2:M, 1:N-1] + B[0:M-2, 1:N-1])

