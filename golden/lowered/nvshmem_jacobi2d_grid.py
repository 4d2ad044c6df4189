# appyc 0.1.0 --emit lowered: samples/nvshmem_jacobi2d_grid.py after the high-level passes (assembly APPy).
"""Jacobi 2-D over several GPUs on a 2-D process grid: four neighbours per PE.

The PEs form a px x py grid (px >= py, as square as n_pes() allows: 2 PEs are 2 x 1, 4 are
2 x 2, 8 are 4 x 2), PE `me` at grid row me // py, column me % py. Each PE holds an M x N array:
rows 1..M-2 and columns 1..N-2 are its block of the global grid; rows 0 and M-1 and columns 0
and N-1 are halos, copies of the neighbours' edges. The global grid wraps around in both axes
(periodic; along an axis of one PE, a PE is its own neighbour). Each step exchanges the four
halos of A, waits for them, computes B, then the same for B.

Exercises: a process grid computed in host code (a helper function of the module), puts of rows
(contiguous) and of columns (`A[1:M - 1, 0]`, strided by N: one iput), eight flags a step, and
four waits before each stencil.
"""
import numpy as np
from appyc_aot import nvshmem


def process_grid_2d(npes):
    """(px, py) with px * py == npes and px >= py, py the largest divisor <= sqrt(npes)."""
    py = 1
    d = 1
    while d * d <= npes:
        if npes % d == 0:
            py = d
        d += 1
    return npes // py, py


def jacobi_2d(A, B, M, N, T):
    me = _appyc_nvshmem_my_pe()
    npes = _appyc_nvshmem_n_pes()
    px, py = process_grid_2d(npes)
    i, j = me // py, me % py
    up = ((i + px - 1) % px) * py + j
    down = ((i + 1) % px) * py + j
    left = i * py + (j + py - 1) % py
    right = i * py + (j + 1) % py
    flags = _appyc_nvshmem_symmetric(torch.zeros(8, dtype=torch.int64, device=A.device))
    for t in range(1, T + 1):
        # My edges are the neighbours' halos: first row -> up's last, last row -> down's first,
        # first column -> left's last, last column -> right's first.
        # _comm0
        #pragma sequential for
        nvshmem.Putmem(A[M - 1, 1:N - 1], A[1, 1:N - 1], up, flags[0])
        # _comm1
        #pragma sequential for
        nvshmem.Putmem(A[0, 1:N - 1], A[M - 2, 1:N - 1], down, flags[1])
        # _comm2
        #pragma sequential for
        nvshmem.Putmem(A[1:M - 1, N - 1], A[1:M - 1, 1], left, flags[2])
        # _comm3
        #pragma sequential for
        nvshmem.Putmem(A[1:M - 1, 0], A[1:M - 1, N - 2], right, flags[3])
        # _comm4
        #pragma sequential for
        nvshmem.SignalWait(flags[0], t)
        # _comm5
        #pragma sequential for
        nvshmem.SignalWait(flags[1], t)
        # _comm6
        #pragma sequential for
        nvshmem.SignalWait(flags[2], t)
        # _comm7
        #pragma sequential for
        nvshmem.SignalWait(flags[3], t)
        # _jacobi_2d_kernel0
        #pragma parallel for simd
        for _p0 in range(1, M - 1, 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, M - 1)
            #pragma parallel for simd
            for _p1 in range(1, N - 1, 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, N - 1)
                B[_p0, _p1] = 0.2 * (A[_p0, _p1] + A[_p0, _p1 - 1] + A[_p0, _p1 + 1] + A[_p0 + 1, _p1] + A[_p0 - 1, _p1])
        # _comm8
        #pragma sequential for
        nvshmem.Putmem(B[M - 1, 1:N - 1], B[1, 1:N - 1], up, flags[4])
        # _comm9
        #pragma sequential for
        nvshmem.Putmem(B[0, 1:N - 1], B[M - 2, 1:N - 1], down, flags[5])
        # _comm10
        #pragma sequential for
        nvshmem.Putmem(B[1:M - 1, N - 1], B[1:M - 1, 1], left, flags[6])
        # _comm11
        #pragma sequential for
        nvshmem.Putmem(B[1:M - 1, 0], B[1:M - 1, N - 2], right, flags[7])
        # _comm12
        #pragma sequential for
        nvshmem.SignalWait(flags[4], t)
        # _comm13
        #pragma sequential for
        nvshmem.SignalWait(flags[5], t)
        # _comm14
        #pragma sequential for
        nvshmem.SignalWait(flags[6], t)
        # _comm15
        #pragma sequential for
        nvshmem.SignalWait(flags[7], t)
        # _jacobi_2d_kernel1
        #pragma parallel for simd
        for _p0 in range(1, M - 1, 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, M - 1)
            #pragma parallel for simd
            for _p1 in range(1, N - 1, 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, N - 1)
                A[_p0, _p1] = 0.2 * (B[_p0, _p1] + B[_p0, _p1 - 1] + B[_p0, _p1 + 1] + B[_p0 + 1, _p1] + B[_p0 - 1, _p1])
