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
    me = nvshmem.my_pe()
    npes = nvshmem.n_pes()
    up = (me + npes - 1) % npes
    down = (me + 1) % npes
    flags = np.zeros(2, dtype=np.int64)
    A_prev = np.zeros((2, 2, N), dtype=A.dtype)
    for t in range(1, T + 1):
        nvshmem.Putmem(A_prev[t % 2, 0, 1:N - 1], A[1, 1:N - 1], up, flags[0], t)
        nvshmem.Putmem(A_prev[t % 2, 1, 1:N - 1], A[M - 2, 1:N - 1], down, flags[1], t)
        #pragma 2:M-2=>parallel 1:N-1=>parallel
        B[2:M-2, 1:N-1] = 0.2 * (A[2:M-2, 1:N-1] + A[2:M-2, :N-2] + A[2:M-2, 2:N]
                                 + A[3:M-1, 1:N-1] + A[1:M-3, 1:N-1])
        nvshmem.SignalWait(flags[0], t)
        nvshmem.SignalWait(flags[1], t)
        #pragma 1:N-1=>parallel
        A[M - 1, 1:N-1] = A_prev[t % 2, 0, 1:N-1]
        #pragma 1:N-1=>parallel
        A[0, 1:N-1] = A_prev[t % 2, 1, 1:N-1]
        #pragma 1:N-1=>parallel
        B[1, 1:N-1] = 0.2 * (A[1, 1:N-1] + A[1, :N-2] + A[1, 2:N] + A[2, 1:N-1] + A[0, 1:N-1])
        #pragma 1:N-1=>parallel
        B[M - 2, 1:N-1] = 0.2 * (A[M - 2, 1:N-1] + A[M - 2, :N-2] + A[M - 2, 2:N]
                                 + A[M - 1, 1:N-1] + A[M - 3, 1:N-1])
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        A[1:M-1, 1:N-1] = B[1:M-1, 1:N-1]
