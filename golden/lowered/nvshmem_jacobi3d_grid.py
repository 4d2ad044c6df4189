# appyc 0.1.0 --emit lowered: samples/nvshmem_jacobi3d_grid.py after the high-level passes (assembly APPy).
"""Jacobi 3-D (7-point stencil) over several GPUs on a 3-D process grid: six neighbours per PE.

The PEs form a px x py x pz grid (pz the largest divisor of n_pes() whose cube is at most
n_pes(), then px x py as in nvshmem_jacobi2d_grid.py: 2 PEs are 2 x 1 x 1, 4 are 2 x 2 x 1, 8
are 2 x 2 x 2), PE `me` at (me // (py * pz), me // pz % py, me % pz). Each PE holds an L x M x N
array whose interior 1..L-2 x 1..M-2 x 1..N-2 is its block of the global grid; the outer layer
of each axis is a halo. The global grid wraps around in all three axes (periodic; along an axis
of one PE, a PE is its own neighbour).

The axis-0 faces go as whole planes (`A[1, :, :]`: one contiguous put, the way the paper's
3-D case sends its largest face); their rims are halos of the other axes, which the 7-point
stencil never reads, so the values they carry do not matter. The faces of axes 1 and 2 are
strided 2-D views (`A[1:L - 1, M - 1, 1:N - 1]`: L-2 rows of N-2; `A[1:L - 1, 1:M - 1, N - 1]`:
L-2 rows of M-2 elements N apart), one iput a row.

Exercises: six puts and waits per array and step (twelve flags), contiguous and strided 2-D
views, host helper functions computing the process grid from n_pes().
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


def process_grid_3d(npes):
    """(px, py, pz) with px * py * pz == npes: pz the largest divisor whose cube is <= npes."""
    pz = 1
    d = 1
    while d * d * d <= npes:
        if npes % d == 0:
            pz = d
        d += 1
    px, py = process_grid_2d(npes // pz)
    return px, py, pz


def jacobi_3d(A, B, L, M, N, T):
    me = _appyc_nvshmem_my_pe()
    npes = _appyc_nvshmem_n_pes()
    px, py, pz = process_grid_3d(npes)
    i, j, k = me // (py * pz), me // pz % py, me % pz
    # Neighbours below (b) and above (a) along each axis.
    b0 = ((i + px - 1) % px * py + j) * pz + k
    a0 = ((i + 1) % px * py + j) * pz + k
    b1 = (i * py + (j + py - 1) % py) * pz + k
    a1 = (i * py + (j + 1) % py) * pz + k
    b2 = (i * py + j) * pz + (k + pz - 1) % pz
    a2 = (i * py + j) * pz + (k + 1) % pz
    flags = _appyc_nvshmem_symmetric(torch.zeros(12, dtype=torch.int64, device=A.device))
    for t in range(1, T + 1):
        # My first layer of each axis is the last halo of the PE below, my last its first.
        # _comm0
        #pragma sequential for
        nvshmem.Putmem(A[L - 1, 0:A.shape[1], 0:A.shape[2]], A[1, 0:A.shape[1], 0:A.shape[2]], b0, flags[0])
        # _comm1
        #pragma sequential for
        nvshmem.Putmem(A[0, 0:A.shape[1], 0:A.shape[2]], A[L - 2, 0:A.shape[1], 0:A.shape[2]], a0, flags[1])
        # _comm2
        #pragma sequential for
        nvshmem.Putmem(A[1:L - 1, M - 1, 1:N - 1], A[1:L - 1, 1, 1:N - 1], b1, flags[2])
        # _comm3
        #pragma sequential for
        nvshmem.Putmem(A[1:L - 1, 0, 1:N - 1], A[1:L - 1, M - 2, 1:N - 1], a1, flags[3])
        # _comm4
        #pragma sequential for
        nvshmem.Putmem(A[1:L - 1, 1:M - 1, N - 1], A[1:L - 1, 1:M - 1, 1], b2, flags[4])
        # _comm5
        #pragma sequential for
        nvshmem.Putmem(A[1:L - 1, 1:M - 1, 0], A[1:L - 1, 1:M - 1, N - 2], a2, flags[5])
        # _comm6
        #pragma sequential for
        nvshmem.SignalWait(flags[0], t)
        # _comm7
        #pragma sequential for
        nvshmem.SignalWait(flags[1], t)
        # _comm8
        #pragma sequential for
        nvshmem.SignalWait(flags[2], t)
        # _comm9
        #pragma sequential for
        nvshmem.SignalWait(flags[3], t)
        # _comm10
        #pragma sequential for
        nvshmem.SignalWait(flags[4], t)
        # _comm11
        #pragma sequential for
        nvshmem.SignalWait(flags[5], t)
        # _jacobi_3d_kernel0
        #pragma parallel for
        for _p0 in range(1, L - 1, 1):
            #pragma parallel for simd
            for _p1 in range(1, M - 1, 1):
                _p1 = appy.vidx(_p1, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for _p2 in range(1, N - 1, 1):
                    _p2 = appy.vidx(_p2, appy.MVL // appy.ROW_BLOCK, N - 1)
                    B[_p0, _p1, _p2] = (A[_p0, _p1, _p2] + A[_p0 - 1, _p1, _p2] + A[_p0 + 1, _p1, _p2] + A[_p0, _p1 - 1, _p2] + A[_p0, _p1 + 1, _p2] + A[_p0, _p1, _p2 - 1] + A[_p0, _p1, _p2 + 1]) / 7.0
        # _comm12
        #pragma sequential for
        nvshmem.Putmem(B[L - 1, 0:B.shape[1], 0:B.shape[2]], B[1, 0:B.shape[1], 0:B.shape[2]], b0, flags[6])
        # _comm13
        #pragma sequential for
        nvshmem.Putmem(B[0, 0:B.shape[1], 0:B.shape[2]], B[L - 2, 0:B.shape[1], 0:B.shape[2]], a0, flags[7])
        # _comm14
        #pragma sequential for
        nvshmem.Putmem(B[1:L - 1, M - 1, 1:N - 1], B[1:L - 1, 1, 1:N - 1], b1, flags[8])
        # _comm15
        #pragma sequential for
        nvshmem.Putmem(B[1:L - 1, 0, 1:N - 1], B[1:L - 1, M - 2, 1:N - 1], a1, flags[9])
        # _comm16
        #pragma sequential for
        nvshmem.Putmem(B[1:L - 1, 1:M - 1, N - 1], B[1:L - 1, 1:M - 1, 1], b2, flags[10])
        # _comm17
        #pragma sequential for
        nvshmem.Putmem(B[1:L - 1, 1:M - 1, 0], B[1:L - 1, 1:M - 1, N - 2], a2, flags[11])
        # _comm18
        #pragma sequential for
        nvshmem.SignalWait(flags[6], t)
        # _comm19
        #pragma sequential for
        nvshmem.SignalWait(flags[7], t)
        # _comm20
        #pragma sequential for
        nvshmem.SignalWait(flags[8], t)
        # _comm21
        #pragma sequential for
        nvshmem.SignalWait(flags[9], t)
        # _comm22
        #pragma sequential for
        nvshmem.SignalWait(flags[10], t)
        # _comm23
        #pragma sequential for
        nvshmem.SignalWait(flags[11], t)
        # _jacobi_3d_kernel1
        #pragma parallel for
        for _p0 in range(1, L - 1, 1):
            #pragma parallel for simd
            for _p1 in range(1, M - 1, 1):
                _p1 = appy.vidx(_p1, appy.ROW_BLOCK, M - 1)
                #pragma parallel for simd
                for _p2 in range(1, N - 1, 1):
                    _p2 = appy.vidx(_p2, appy.MVL // appy.ROW_BLOCK, N - 1)
                    A[_p0, _p1, _p2] = (B[_p0, _p1, _p2] + B[_p0 - 1, _p1, _p2] + B[_p0 + 1, _p1, _p2] + B[_p0, _p1 - 1, _p2] + B[_p0, _p1 + 1, _p2] + B[_p0, _p1, _p2 - 1] + B[_p0, _p1, _p2 + 1]) / 7.0
