# appyc 0.1.0 --emit lowered: samples/nvshmem_jacobi2d_l8.py after the high-level passes (assembly APPy).
"""Jacobi 2-D over several GPUs, halo exchange first (the paper's Listing 8, section III-D).

The global grid is split by rows: each PE (one per GPU) holds rows 1..M-2 of its slab in an
M x N array whose rows 0 and M-1 are halos, copies of the neighbours' edge rows. Rows wrap
around the PEs (periodic in rows; on one PE, PE 0 is its own neighbour); columns 0 and N-1 are
fixed. Each step exchanges the halos of A, waits for them, computes B, then the same for B.

Exercises: `nvshmem.Putmem` with a flag inside a time loop (contiguous rows), `SignalWait`
before the stencil, symmetric arrays (parameters and a flag array allocated in the function),
and `nvshmem.my_pe()`/`n_pes()` in host code. Run it with `appyc_aot.nvshmem.run` (NumPy) or,
compiled, once per GPU (README, "Multi-GPU").
"""
import numpy as np
from appyc_aot import nvshmem


def jacobi_2d(A, B, M, N, T):
    me = _appyc_nvshmem_my_pe()
    npes = _appyc_nvshmem_n_pes()
    up = (me + npes - 1) % npes
    down = (me + 1) % npes
    flags = _appyc_nvshmem_symmetric(torch.zeros(4, dtype=torch.int64, device=A.device))
    for t in range(1, T + 1):
        # My first row is the bottom halo of the PE above, my last the top halo of the one below.
        # _comm0
        #pragma sequential for
        nvshmem.Putmem(A[M - 1, 1:N - 1], A[1, 1:N - 1], up, flags[0])
        # _comm1
        #pragma sequential for
        nvshmem.Putmem(A[0, 1:N - 1], A[M - 2, 1:N - 1], down, flags[1])
        # _comm2
        #pragma sequential for
        nvshmem.SignalWait(flags[0], t)
        # _comm3
        #pragma sequential for
        nvshmem.SignalWait(flags[1], t)
        # _jacobi_2d_kernel0
        #pragma parallel for simd
        for _p0 in range(1, M - 1, 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, M - 1)
            #pragma parallel for simd
            for _p1 in range(1, N - 1, 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, N - 1)
                B[_p0, _p1] = 0.2 * (A[_p0, _p1] + A[_p0, _p1 - 1] + A[_p0, _p1 + 1] + A[_p0 + 1, _p1] + A[_p0 - 1, _p1])
        # _comm4
        #pragma sequential for
        nvshmem.Putmem(B[M - 1, 1:N - 1], B[1, 1:N - 1], up, flags[2])
        # _comm5
        #pragma sequential for
        nvshmem.Putmem(B[0, 1:N - 1], B[M - 2, 1:N - 1], down, flags[3])
        # _comm6
        #pragma sequential for
        nvshmem.SignalWait(flags[2], t)
        # _comm7
        #pragma sequential for
        nvshmem.SignalWait(flags[3], t)
        # _jacobi_2d_kernel1
        #pragma parallel for simd
        for _p0 in range(1, M - 1, 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, M - 1)
            #pragma parallel for simd
            for _p1 in range(1, N - 1, 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, N - 1)
                A[_p0, _p1] = 0.2 * (B[_p0, _p1] + B[_p0, _p1 - 1] + B[_p0, _p1 + 1] + B[_p0 + 1, _p1] + B[_p0 - 1, _p1])
