# appyc 0.1.0 --emit lowered: samples/nvshmem_jacobi2d_l9.py after the high-level passes (assembly APPy).
"""Jacobi 2-D over several GPUs with communication overlapped (the paper's Listing 9).

Row decomposition as in nvshmem_jacobi2d_l8.py (rows 0 and M-1 of each PE's M x N array are
halos, rows wrap around the PEs, columns 0 and N-1 fixed), one Jacobi step per iteration. The
edge rows are put into a communication buffer `A_prev` on the neighbours, and the rows that need
no halo are computed while the puts are in flight; then the PE waits, copies the buffer into its
halos and computes its two edge rows. `A_prev` has two slots (`t % 2`): a neighbour one step
ahead writes the other slot, never the one still being copied (the paper's single buffer could
be overwritten before it is read).

Exercises: puts into a buffer that is not the computed array, compute between the puts and
the waits, strided index expressions of the loop variable (`A_prev[t % 2, 0, 1:N-1]`), and
function-level tensor statements on single rows.
"""
import numpy as np
from appyc_aot import nvshmem


def jacobi_2d(A, B, M, N, T):
    me = _appyc_nvshmem_my_pe()
    npes = _appyc_nvshmem_n_pes()
    up = (me + npes - 1) % npes
    down = (me + 1) % npes
    flags = _appyc_nvshmem_symmetric(torch.zeros(2, dtype=torch.int64, device=A.device))
    A_prev = _appyc_nvshmem_symmetric(torch.zeros((2, 2, N), dtype=A.dtype, device=A.device))
    for t in range(1, T + 1):
        # _comm0
        #pragma sequential for
        nvshmem.Putmem(A_prev[t % 2, 0, 1:N - 1], A[1, 1:N - 1], up, flags[0])
        # _comm1
        #pragma sequential for
        nvshmem.Putmem(A_prev[t % 2, 1, 1:N - 1], A[M - 2, 1:N - 1], down, flags[1])
        # _jacobi_2d_kernel0
        #pragma parallel for simd
        for _p0 in range(2, M - 2, 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, M - 2)
            #pragma parallel for simd
            for _p1 in range(1, N - 1, 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, N - 1)
                B[_p0, _p1] = 0.2 * (A[_p0, _p1] + A[_p0, _p1 - 1] + A[_p0, _p1 + 1] + A[_p0 + 1, _p1] + A[_p0 - 1, _p1])
        # _comm2
        #pragma sequential for
        nvshmem.SignalWait(flags[0], t)
        # _comm3
        #pragma sequential for
        nvshmem.SignalWait(flags[1], t)
        # _jacobi_2d_kernel1
        #pragma parallel for simd
        for _p0 in range(1, N - 1, 1):
            _p0 = appy.vidx(_p0, appy.MVL, N - 1)
            A[M - 1, _p0] = A_prev[t % 2, 0, _p0]
        # _jacobi_2d_kernel2
        #pragma parallel for simd
        for _p0 in range(1, N - 1, 1):
            _p0 = appy.vidx(_p0, appy.MVL, N - 1)
            A[0, _p0] = A_prev[t % 2, 1, _p0]
        # _jacobi_2d_kernel3
        #pragma parallel for simd
        for _p0 in range(1, N - 1, 1):
            _p0 = appy.vidx(_p0, appy.MVL, N - 1)
            B[1, _p0] = 0.2 * (A[1, _p0] + A[1, _p0 - 1] + A[1, _p0 + 1] + A[2, _p0] + A[0, _p0])
        # _jacobi_2d_kernel4
        #pragma parallel for simd
        for _p0 in range(1, N - 1, 1):
            _p0 = appy.vidx(_p0, appy.MVL, N - 1)
            B[M - 2, _p0] = 0.2 * (A[M - 2, _p0] + A[M - 2, _p0 - 1] + A[M - 2, _p0 + 1] + A[M - 1, _p0] + A[M - 3, _p0])
        # _jacobi_2d_kernel5
        #pragma parallel for simd
        for _p0 in range(1, M - 1, 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, M - 1)
            #pragma parallel for simd
            for _p1 in range(1, N - 1, 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, N - 1)
                A[_p0, _p1] = B[_p0, _p1]
