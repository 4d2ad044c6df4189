"""Jacobi 2-D on several GPUs from the single-GPU program and one pragma (issue 24, part 3).

The loop is the plain single-GPU jacobi_2d (samples/jacobi_2d.py); `#pragma distribute(A, B)`
runs it on every PE (one process per GPU under torchrun) with a block of rows of A and B and
one halo row each side: appyc derives the halo from the stencil's row offsets, puts each
block's edge rows into its neighbours' halos with a flag before a sweep reads them, and gathers
the result into A and B on every rank. The global array's edges stay its boundary; one
process without torchrun runs the single-GPU kernel.

Exercises: `#pragma distribute` on a host time loop with two tensor-statement sweeps that
alternate two arrays (Listing 8's exchange order, derived rather than written), global bounds
(`1:M-1`) clipped to each PE's rows, any row count over any number of PEs.
"""
import numpy as np


def jacobi_2d(A, B, M, N, T):
    #pragma distribute(A, B)
    for t in range(T):
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        B[1:M-1, 1:N-1] = 0.2 * (A[1:M-1, 1:N-1] + A[1:M-1, :N-2] + A[1:M-1, 2:N]
                                 + A[2:M, 1:N-1] + A[0:M-2, 1:N-1])
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        A[1:M-1, 1:N-1] = 0.2 * (B[1:M-1, 1:N-1] + B[1:M-1, :N-2] + B[1:M-1, 2:N]
                                 + B[2:M, 1:N-1] + B[0:M-2, 1:N-1])
