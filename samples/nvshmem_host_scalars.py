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
    me = nvshmem.my_pe()
    npes = nvshmem.n_pes()
    up = (me + npes - 1) % npes
    down = (me + 1) % npes
    flags = np.zeros(4, dtype=np.int64)
    sweeps = 0
    for t in range(T):
        k = t + 1
        nvshmem.Putmem(A[M - 1, 1:N - 1], A[1, 1:N - 1], up, flags[0], k)
        nvshmem.Putmem(A[0, 1:N - 1], A[M - 2, 1:N - 1], down, flags[1], k)
        nvshmem.SignalWait(flags[0], k)
        nvshmem.SignalWait(flags[1], k)
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        B[1:M-1, 1:N-1] = 0.2 * (A[1:M-1, 1:N-1] + A[1:M-1, :N-2] + A[1:M-1, 2:N]
                                 + A[2:M, 1:N-1] + A[0:M-2, 1:N-1])
        nvshmem.Putmem(B[M - 1, 1:N - 1], B[1, 1:N - 1], up, flags[2], k)
        nvshmem.Putmem(B[0, 1:N - 1], B[M - 2, 1:N - 1], down, flags[3], k)
        nvshmem.SignalWait(flags[2], k)
        nvshmem.SignalWait(flags[3], k)
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        A[1:M-1, 1:N-1] = 0.2 * (B[1:M-1, 1:N-1] + B[1:M-1, :N-2] + B[1:M-1, 2:N]
                                 + B[2:M, 1:N-1] + B[0:M-2, 1:N-1])
        sweeps = sweeps + 2
    return sweeps
