# appyc 0.1.0 --emit lowered: samples/inplace_shift.py after the high-level passes (assembly APPy).
"""Self-dependent in-place updates (paper Figure 2): the target is read at a shifted slice.

Exercises: temporary arrays (Alg. 5) inside a parallel loop and at function level, and the
proofs that skip them: every read of the target at the written element, or lane-aligned with it
(another row, same columns), and single elements read into scalars before the statement.
"""
import numpy as np


def smooth_rows(A, M, N):
    # _smooth_rows_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        for _i_base in range(1, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            _tmp[i, _i] = 0.5 * (A[i, _i - 1] + A[i, _i])
        appy.syncthreads()
        for _i1_base in range(1, N, appy.MVL):
            _i1 = appy.vidx(_i1_base, appy.MVL, N)
            A[i, _i1] = _tmp[i, _i1]


def smooth_vector(x, N):
    # _smooth_vector_kernel0
    #pragma sequential for
    for _i_base in range(1, N, appy.MVL):
        _i = appy.vidx(_i_base, appy.MVL, N)
        _tmp[_i] = 0.5 * (x[_i - 1] + x[_i])
    appy.syncthreads()
    for _i1_base in range(1, N, appy.MVL):
        _i1 = appy.vidx(_i1_base, appy.MVL, N)
        x[_i1] = _tmp[_i1]


def scale_in_place(A, M, N, s):
    # _scale_in_place_kernel0
    #pragma parallel for simd
    for _p0 in range(0, M, 1):
        _p0 = appy.vidx(_p0, appy.ROW_BLOCK, M)
        #pragma parallel for simd
        for _i in range(0, N, 1):
            _i = appy.vidx(_i, appy.MVL // appy.ROW_BLOCK, N)
            A[_p0, _i] = A[_p0, _i] * s + 1.0


def subtract_pivot(A, M, N, p):
    # NumPy reads A[i, p] before any store, though the strip holding column p overwrites it:
    # the one element is read into a scalar first (no temporary array needed).
    # _subtract_pivot_kernel0
    #pragma parallel for
    for i in range(0, M, 1):
        _elem = A[i, p]
        appy.syncthreads()
        for _i_base in range(0, N, appy.MVL):
            _i = appy.vidx(_i_base, appy.MVL, N)
            A[i, _i] = A[i, _i] - _elem


def relax_rows(path, N):
    # Floyd-Warshall: row i reads row k while row i is written. Within a worker every lane reads
    # only its own column of row k, so no temporary is needed; row k itself does not change in
    # round k when the diagonal is non-negative (what makes the parallel loop race-free).
    for k in range(N):
        # _relax_rows_kernel0
        #pragma parallel for
        for i in range(0, N, 1):
            _elem = path[i, k]
            appy.syncthreads()
            for _i_base in range(0, N, appy.MVL):
                _i = appy.vidx(_i_base, appy.MVL, N)
                path[i, _i] = np.minimum(path[i, _i], _elem + path[k, _i])
