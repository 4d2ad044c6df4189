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
    me = nvshmem.my_pe()
    npes = nvshmem.n_pes()
    up = (me + npes - 1) % npes
    down = (me + 1) % npes
    flags = np.zeros(4, dtype=np.int64)
    for t in range(1, T + 1):
        nvshmem.Putmem(A[L - 1, :, :], A[1, :, :], up, flags[0], t)
        nvshmem.Putmem(A[0, :, :], A[L - 2, :, :], down, flags[1], t)
        nvshmem.SignalWait(flags[0], t)
        nvshmem.SignalWait(flags[1], t)
        #pragma 1:L-1=>parallel 1:M-1=>parallel 1:N-1=>parallel
        B[1:L-1, 1:M-1, 1:N-1] = (A[1:L-1, 1:M-1, 1:N-1] + A[0:L-2, 1:M-1, 1:N-1] + A[2:L, 1:M-1, 1:N-1]
                                  + A[1:L-1, 0:M-2, 1:N-1] + A[1:L-1, 2:M, 1:N-1]
                                  + A[1:L-1, 1:M-1, 0:N-2] + A[1:L-1, 1:M-1, 2:N]) / 7.0
        nvshmem.Putmem(B[L - 1, :, :], B[1, :, :], up, flags[2], t)
        nvshmem.Putmem(B[0, :, :], B[L - 2, :, :], down, flags[3], t)
        nvshmem.SignalWait(flags[2], t)
        nvshmem.SignalWait(flags[3], t)
        #pragma 1:L-1=>parallel 1:M-1=>parallel 1:N-1=>parallel
        A[1:L-1, 1:M-1, 1:N-1] = (B[1:L-1, 1:M-1, 1:N-1] + B[0:L-2, 1:M-1, 1:N-1] + B[2:L, 1:M-1, 1:N-1]
                                  + B[1:L-1, 0:M-2, 1:N-1] + B[1:L-1, 2:M, 1:N-1]
                                  + B[1:L-1, 1:M-1, 0:N-2] + B[1:L-1, 1:M-1, 2:N]) / 7.0
