"""Multi-PE programs that deadlock on purpose: the tests of bounded waits (test_nvshmem.py,
test_nvshmem_runtime.py) and the GPU check bench/gpu_nvshmem_waits.py compile them.

`overwait` is Listing 8's halo exchange (samples/nvshmem_jacobi2d_l8.py) in which every PE
waits for one signal more than its peer sends (`t + 1`): on 2 PEs each stops at t = 1, waiting
for a put that its peer makes only after its own wait. `unsent` waits for a flag no PE signals.
"""
import numpy as np
from appyc_aot import nvshmem


def overwait(A, B, M, N, T):
    me = nvshmem.my_pe()
    npes = nvshmem.n_pes()
    up = (me + npes - 1) % npes
    down = (me + 1) % npes
    flags = np.zeros(2, dtype=np.int64)
    for t in range(1, T + 1):
        nvshmem.Putmem(A[M - 1, 1:N - 1], A[1, 1:N - 1], up, flags[0], t)
        nvshmem.Putmem(A[0, 1:N - 1], A[M - 2, 1:N - 1], down, flags[1], t)
        nvshmem.SignalWait(flags[0], t + 1)
        nvshmem.SignalWait(flags[1], t)
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        B[1:M-1, 1:N-1] = 0.2 * (A[1:M-1, 1:N-1] + A[1:M-1, :N-2] + A[1:M-1, 2:N]
                                 + A[2:M, 1:N-1] + A[0:M-2, 1:N-1])
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        A[1:M-1, 1:N-1] = B[1:M-1, 1:N-1]


def unsent(A, B, M, N, T):
    flags = np.zeros(2, dtype=np.int64)
    for t in range(1, T + 1):
        nvshmem.SignalWait(flags[1], t)
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        B[1:M-1, 1:N-1] = A[1:M-1, 1:N-1]
