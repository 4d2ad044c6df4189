# appyc 0.1.0 --emit lowered: samples/jacobi_2d.py after the high-level passes (assembly APPy).
"""Jacobi 2-D stencil in sliced index notation (paper Listing 7, PolyBench jacobi_2d).

Exercises: function-level tensor statements with dimension pragmas inside a host time loop;
shifted slices of one dimension (`:N-2`, `1:N-1`, `2:N`); both dimensions `parallel` (the inner
one is vectorised by the compiler), and `parallel` + `simd`.
"""
import numpy as np


def jacobi_2d(A, B, M, N, T):
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
            for _i in range(1, N - 1, 1):
                _i = appy.vidx(_i, appy.MVL // appy.ROW_BLOCK, N - 1)
                A[_p0, _i] = 0.2 * (B[_p0, _i] + B[_p0, _i - 1] + B[_p0, _i + 1] + B[_p0 + 1, _i] + B[_p0 - 1, _i])

