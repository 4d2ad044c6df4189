"""Held-out row program for issue 24's 85 % target: explicit heat diffusion over row slabs.

Issue 24 asks that, at 8192^2 per GPU on 2 GPUs, both the Listing 8 sample and a held-out row
program reach 85 % of copy bandwidth per GPU. This is that held-out program: it was written after
appyc's NVSHMEM path had been tuned on samples/nvshmem_jacobi2d_l8.py and was never used to tune
it, so its time says whether the tuning carries over to a row program nobody tuned for. It is
written as a user would write it, in a different style from Listing 8: other names, a float
parameter, whole-row halos, puts to the lower neighbour first, a 0-based step counter.

The global R_g x C grid is split by rows: each PE holds its `R - 2` rows in rows 1..R-2 of an
R x C array whose rows 0 and R-1 are halos (copies of the neighbours' edge rows). Rows wrap
around the PEs (periodic in rows: on one PE, PE 0 is its own neighbour); columns 0 and C-1 are
fixed. Each step sends the edge rows of U to the neighbours, waits for U's halos, computes
V = U + c * (laplacian of U), and does the same for V back into U: two sweeps a step.

Compiled output: heat_rows_gen.py (`appyc bench/nvshmem_heldout/heat_rows.py -o ...`); its CPU
check is check_cpu.py, its GPU timing the `heldout_rows` row of scripts/gpu_nvshmem.py.
"""
import numpy as np
from appyc_aot import nvshmem


def heat_rows(U, V, c, R, C, steps):
    pe = nvshmem.my_pe()
    npes = nvshmem.n_pes()
    north = (pe - 1) % npes
    south = (pe + 1) % npes
    # Per buffer: [0] my top halo arrived (sent by north), [1] my bottom halo (sent by south).
    got_u = np.zeros(2, dtype=np.int64)
    got_v = np.zeros(2, dtype=np.int64)
    for step in range(steps):
        # My last row is south's top halo, my first row north's bottom halo (whole rows).
        nvshmem.Putmem(U[0, :], U[R - 2, :], south, got_u[0], step + 1)
        nvshmem.Putmem(U[R - 1, :], U[1, :], north, got_u[1], step + 1)
        nvshmem.SignalWait(got_u[1], step + 1)
        nvshmem.SignalWait(got_u[0], step + 1)
        #pragma 1:R-1=>parallel 1:C-1=>parallel
        V[1:R-1, 1:C-1] = U[1:R-1, 1:C-1] + c * (U[0:R-2, 1:C-1] + U[2:R, 1:C-1] + U[1:R-1, 0:C-2]
                                                 + U[1:R-1, 2:C] - 4.0 * U[1:R-1, 1:C-1])
        nvshmem.Putmem(V[0, :], V[R - 2, :], south, got_v[0], step + 1)
        nvshmem.Putmem(V[R - 1, :], V[1, :], north, got_v[1], step + 1)
        nvshmem.SignalWait(got_v[1], step + 1)
        nvshmem.SignalWait(got_v[0], step + 1)
        #pragma 1:R-1=>parallel 1:C-1=>parallel
        U[1:R-1, 1:C-1] = V[1:R-1, 1:C-1] + c * (V[0:R-2, 1:C-1] + V[2:R, 1:C-1] + V[1:R-1, 0:C-2]
                                                 + V[1:R-1, 2:C] - 4.0 * V[1:R-1, 1:C-1])
