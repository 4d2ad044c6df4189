# appyc 0.1.0 --emit lowered: samples/softmax_tensor.py after the high-level passes (assembly APPy).
"""Softmax in tensor form (paper Listing 6, second version, and the B.3 limitation lifted).

Exercises: reductions of a row slice into worker-private scalars (`np.max`, `np.sum`, `.sum()`)
inside a parallel loop, and a function-level softmax whose reductions sit inside the
expression (`... / np.sum(..., axis=1)[:, None]`), split into their own statements.
"""
import numpy as np


def softmax(a, b, M, N):
    # _softmax_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        _acc = a[i, 0]
        for _i_base in range(0, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            _acc = max(_acc, max(a[i, _i]))
        m = _acc
        _acc1 = 0
        for _i1_base in range(0, N, appy.MVL):
            _i1 = appy.vidx(_i1_base, appy.MVL, N)
            _acc1 = _acc1 + sum(np.exp(a[i, _i1] - m))
        s = _acc1
        for _i2_base in range(0, N, appy.MVL):
            _i2 = appy.vidx(_i2_base, appy.MVL, N)
            b[i, _i2] = np.exp(a[i, _i2] - m) / s


def softmax_rows(a, b, M, N):
    # _softmax_rows_kernel0
    #pragma parallel for
    for _p0 in range(0, M, 1):
        _acc = a[_p0, 0]
        for _i_base in range(0, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            _acc = max(_acc, max(a[_p0, _i]))
        _r = _acc
        for _i1_base in range(0, N, appy.MVL):
            _i1 = appy.vidx(_i1_base, appy.MVL, N)
            b[_p0, _i1] = np.exp(a[_p0, _i1] - _r)
    # _softmax_rows_kernel1
    #pragma parallel for
    for _p0 in range(0, M, 1):
        _acc = 0
        for _i_base in range(0, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            _acc = _acc + sum(b[_p0, _i])
        _r = _acc
        appy.syncthreads()
        for _i1_base in range(0, N, appy.MVL):
            _i1 = appy.vidx(_i1_base, appy.MVL, N)
            b[_p0, _i1] = b[_p0, _i1] / _r


def softmax_short_rows(a, b, M, N):
    # Rows of at most 1024 elements: each is one vector, no strip loop (checked at launch).
    # _softmax_short_rows_kernel0
    #pragma parallel for
    for _p0 in range(0, M, 1):
        _acc = a[_p0, 0]
        for _i_base in range(0, N, 1024):
            _i = appy.vidx(_i_base, 1024, N)
            _acc = max(_acc, max(a[_p0, _i]))
        _r = _acc
        for _i1_base in range(0, N, 1024):
            _i1 = appy.vidx(_i1_base, 1024, N)
            b[_p0, _i1] = np.exp(a[_p0, _i1] - _r)
    # _softmax_short_rows_kernel1
    #pragma parallel for
    for _p0 in range(0, M, 1):
        _acc = 0
        for _i_base in range(0, N, 1024):
            _i = appy.vidx(_i_base, 1024, N)
            _acc = _acc + sum(b[_p0, _i])
        _r = _acc
        appy.syncthreads()
        for _i1_base in range(0, N, 1024):
            _i1 = appy.vidx(_i1_base, 1024, N)
            b[_p0, _i1] = b[_p0, _i1] / _r
