# appyc 0.1.0 --emit lowered: samples/nvshmem_host_scalars.py after the high-level passes (assembly APPy).
"""Jacobi 2-D over several GPUs with host scalars in the time loop, as users write it.

Listing 8's row split and exchange (samples/nvshmem_jacobi2d_l8.py), but the signal value is a
host scalar the loop computes each step (`k = t + 1` on a 0-based counter), and the loop counts
its sweeps in another, which the function returns. Both are registers of the persistent kernel:
`k` feeds the puts and waits of the step, `sweeps` is read back after the launch.

Exercises: host scalar statements beside `nvshmem` calls in one persistent kernel, a register
read after the loop, symmetric arrays and flags as in Listing 8.
"""
import numpy as np
from appyc_aot import nvshmem


def jacobi_2d(A, B, M, N, T):
    me = _appyc_nvshmem_my_pe()
    npes = _appyc_nvshmem_n_pes()
    up = (me + npes - 1) % npes
    down = (me + 1) % npes
    flags = _appyc_nvshmem_symmetric(torch.zeros(4, dtype=torch.int64, device=A.device))
    sweeps = 0
    for t in range(T):
        k = t + 1
        # _comm0
        #pragma sequential for
        nvshmem.Putmem(A[M - 1, 1:N - 1], A[1, 1:N - 1], up, flags[0])
        # _comm1
        #pragma sequential for
        nvshmem.Putmem(A[0, 1:N - 1], A[M - 2, 1:N - 1], down, flags[1])
        # _comm2
        #pragma sequential for
        nvshmem.SignalWait(flags[0], k)
        # _comm3
        #pragma sequential for
        nvshmem.SignalWait(flags[1], k)
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
        nvshmem.SignalWait(flags[2], k)
        # _comm7
        #pragma sequential for
        nvshmem.SignalWait(flags[3], k)
        # _jacobi_2d_kernel1
        #pragma parallel for simd
        for _p0 in range(1, M - 1, 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, M - 1)
            #pragma parallel for simd
            for _p1 in range(1, N - 1, 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, N - 1)
                A[_p0, _p1] = 0.2 * (B[_p0, _p1] + B[_p0, _p1 - 1] + B[_p0, _p1 + 1] + B[_p0 + 1, _p1] + B[_p0 - 1, _p1])
        sweeps = sweeps + 2
    return sweeps
