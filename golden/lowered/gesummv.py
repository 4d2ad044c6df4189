# appyc 0.1.0 --emit lowered: samples/gesummv.py after the high-level passes (assembly APPy).
"""gesummv (paper Listing 8): y = alpha * A x + beta * B x.

Exercises: matrix-vector products `@` as reductions fused with the element-wise scaling
(`reduction(sum:y)` / `reduce(sum)` on the contracted dimension), `+=` of a tensor statement, and
one statement with two reductions inside a larger expression, split automatically.
"""
import numpy as np


def gesummv(alpha, beta, A, B, x, y, tmp, M, N):
    # _gesummv_kernel0
    #pragma parallel for
    for _p0 in range(0, M, 1):
        _acc = 0
        for _i_base in range(0, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            _acc = _acc + sum(alpha * A[_p0, _i] * x[_i])
        y[_p0] = _acc
    # _gesummv_kernel1
    #pragma parallel for
    for _p0 in range(0, M, 1):
        _acc = 0
        for _i_base in range(0, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            _acc = _acc + sum(beta * B[_p0, _i] * x[_i])
        tmp[_p0] = _acc
    # _gesummv_kernel2
    #pragma parallel for simd
    for _p0 in range(0, M, 1):
        _p0 = appy.vidx(_p0, appy.MVL, M)
        y[_p0] = y[_p0] + tmp[_p0]


def gesummv_one_statement(alpha, beta, A, B, x, y, M, N):
    # _gesummv_one_statement_kernel0
    #pragma parallel for
    for _p0 in range(0, M, 1):
        _acc = 0
        for _i_base in range(0, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            _acc = _acc + sum(A[_p0, _i] * x[_i])
        _r = _acc
        _acc1 = 0
        for _i1_base in range(0, N, appy.MVL):
            _i1 = appy.vidx(_i1_base, appy.MVL, N)
            _acc1 = _acc1 + sum(B[_p0, _i1] * x[_i1])
        _r1 = _acc1
        y[_p0] = alpha * _r + beta * _r1
