"""The held-out row program's case (heat_rows.py): per-PE arguments cut from one global grid and
the global single-array NumPy result, with the interface of tests/difftest/nvshmem_cases.py
(`make_args(pe, n_pes)`, `gather(per_pe_args)`, `expected(n_pes)`), so scripts/gpu_nvshmem.py's
correctness run and check_cpu.py take it as they take the samples' cases. The split is Listing
8's (Jacobi2D there): `rows` interior rows per PE plus a halo row each side, rows periodic across
the PEs, the first and last columns fixed."""
import numpy as np


def heat_global(G, c, sweeps):
    """`sweeps` explicit heat steps V = U + c * (5-point Laplacian of U) on a grid periodic in
    rows, first and last columns fixed: one array, no PEs."""
    U = G.copy()
    for _ in range(sweeps):
        up, down = np.roll(U, 1, axis=0), np.roll(U, -1, axis=0)
        V = U.copy()
        V[:, 1:-1] = U[:, 1:-1] + c * (up[:, 1:-1] + down[:, 1:-1] + U[:, :-2] + U[:, 2:] - 4.0 * U[:, 1:-1])
        U = V
    return U


class HeatRows:
    """`rows` interior rows per PE, `cols` columns, `steps` steps of two sweeps, coefficient c."""

    module, function = "heat_rows_gen", "heat_rows"

    def __init__(self, rows=7, cols=13, steps=3, c=0.15, seed=23):
        self.rows, self.cols, self.steps, self.c, self.seed = rows, cols, steps, c, seed

    def global_grid(self, n_pes):
        return np.random.default_rng(self.seed).standard_normal((self.rows * n_pes, self.cols))

    def make_args(self, pe, n_pes, dtype=np.float64):
        G = self.global_grid(n_pes)
        r, R = self.rows, self.rows + 2
        U = np.zeros((R, self.cols), dtype=dtype)
        U[1:R - 1] = G[pe * r:(pe + 1) * r]
        U[0] = G[(pe * r - 1) % G.shape[0]]
        U[R - 1] = G[((pe + 1) * r) % G.shape[0]]
        return (U, U.copy(), self.c, R, self.cols, self.steps)

    def gather(self, per_pe):
        return np.concatenate([np.asarray(a[0])[1:-1] for a in per_pe])

    def expected(self, n_pes):
        return heat_global(self.global_grid(n_pes), self.c, 2 * self.steps)
