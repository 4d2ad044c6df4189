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
    me = nvshmem.my_pe()
    npes = nvshmem.n_pes()
    up = (me + npes - 1) % npes
    down = (me + 1) % npes
    flags = np.zeros(4, dtype=np.int64)
    for t in range(1, T + 1):
        # My first row is the bottom halo of the PE above, my last the top halo of the one below.
        nvshmem.Putmem(A[M - 1, 1:N - 1], A[1, 1:N - 1], up, flags[0], t)
        nvshmem.Putmem(A[0, 1:N - 1], A[M - 2, 1:N - 1], down, flags[1], t)
        nvshmem.SignalWait(flags[0], t)
        nvshmem.SignalWait(flags[1], t)
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        B[1:M-1, 1:N-1] = 0.2 * (A[1:M-1, 1:N-1] + A[1:M-1, :N-2] + A[1:M-1, 2:N]
                                 + A[2:M, 1:N-1] + A[0:M-2, 1:N-1])
        nvshmem.Putmem(B[M - 1, 1:N - 1], B[1, 1:N - 1], up, flags[2], t)
        nvshmem.Putmem(B[0, 1:N - 1], B[M - 2, 1:N - 1], down, flags[3], t)
        nvshmem.SignalWait(flags[2], t)
        nvshmem.SignalWait(flags[3], t)
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        A[1:M-1, 1:N-1] = 0.2 * (B[1:M-1, 1:N-1] + B[1:M-1, :N-2] + B[1:M-1, 2:N]
                                 + B[2:M, 1:N-1] + B[0:M-2, 1:N-1])
