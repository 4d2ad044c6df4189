# appyc 0.1.0 --emit lowered: samples/distribute_jacobi2d.py after the high-level passes (assembly APPy).
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
        # _jacobi_2d_kernel0
        #pragma parallel for simd
        for _p0 in range(1, M - 1, 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, M - 1)
            #pragma parallel for simd
            for _p1 in range(1, N - 1, 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, N - 1)
                B[_p0, _p1] = 0.2 * (A[_p0, _p1] + A[_p0, _p1 - 1] + A[_p0, _p1 + 1] + A[_p0 + 1, _p1] + A[_p0 - 1, _p1])
        # _jacobi_2d_kernel1
        #pragma parallel for simd
        for _p0 in range(1, M - 1, 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, M - 1)
            #pragma parallel for simd
            for _p1 in range(1, N - 1, 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, N - 1)
                A[_p0, _p1] = 0.2 * (B[_p0, _p1] + B[_p0, _p1 - 1] + B[_p0, _p1 + 1] + B[_p0 + 1, _p1] + B[_p0 - 1, _p1])
