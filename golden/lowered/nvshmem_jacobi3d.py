# appyc 0.1.0 --emit lowered: samples/nvshmem_jacobi3d.py after the high-level passes (assembly APPy).
"""Jacobi 3-D (PolyBench heat-style 7-point stencil) over several GPUs, split along axis 0.

Each PE holds planes 1..L-2 of its slab in an L x M x N array; planes 0 and L-1 are halos
holding the neighbours' edge planes (periodic along axis 0 across the PEs; the faces of axes 1
and 2 are fixed). A halo plane is one contiguous put of M x N elements. Two neighbours per PE
(the paper's 3-D case uses a 3-D process grid with six).

Exercises: 2-D views in `Putmem` (whole planes, contiguous), 3-D tensor statements in a
persistent time loop with halo exchange of both arrays.
"""
import numpy as np
from appyc_aot import nvshmem


def jacobi_3d(A, B, L, M, N, T):
    me = _appyc_nvshmem_my_pe()
    npes = _appyc_nvshmem_n_pes()
    up = (me + npes - 1) % npes
    down = (me + 1) % npes
    flags = _appyc_nvshmem_symmetric(torch.zeros(4, dtype=torch.int64, device=A.device))
    for t in range(1, T + 1):
        # _comm0
        #pragma sequential for
        nvshmem.Putmem(A[L - 1, 0:A.shape[1], 0:A.shape[2]], A[1, 0:A.shape[1], 0:A.shape[2]], up, flags[0])
        # _comm1
        #pragma sequential for
        nvshmem.Putmem(A[0, 0:A.shape[1], 0:A.shape[2]], A[L - 2, 0:A.shape[1], 0:A.shape[2]], down, flags[1])
        # _comm2
        #pragma sequential for
        nvshmem.SignalWait(flags[0], t)
        # _comm3
        #pragma sequential for
        nvshmem.SignalWait(flags[1], t)
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
        # _comm4
        #pragma sequential for
        nvshmem.Putmem(B[L - 1, 0:B.shape[1], 0:B.shape[2]], B[1, 0:B.shape[1], 0:B.shape[2]], up, flags[2])
        # _comm5
        #pragma sequential for
        nvshmem.Putmem(B[0, 0:B.shape[1], 0:B.shape[2]], B[L - 2, 0:B.shape[1], 0:B.shape[2]], down, flags[3])
        # _comm6
        #pragma sequential for
        nvshmem.SignalWait(flags[2], t)
        # _comm7
        #pragma sequential for
        nvshmem.SignalWait(flags[3], t)
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
