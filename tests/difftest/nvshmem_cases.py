"""The multi-PE samples: per-PE arguments cut from one global grid, and the global NumPy result.

Shared by the differential tests (test_nvshmem.py: the reference module and the CPU stand-in of
the compiled code) and scripts/gpu_nvshmem.py (the GPU run): each case gives
`make_args(pe, n_pes)` (NumPy arrays of one PE, halos included), `expected(n_pes)` (the global
result of a plain single-array NumPy run) and `gather(per_pe_args)` (the PEs' slabs glued back).
"""
import numpy as np


def _grid(rows, cols, seed):
    return np.random.default_rng(seed).standard_normal((rows, cols))


def _jacobi2d_global(G, steps):
    """Jacobi on a grid periodic in rows (0..R-1) with fixed first and last columns."""
    A = G.copy()
    for _ in range(steps):
        up, down = np.roll(A, 1, axis=0), np.roll(A, -1, axis=0)
        B = A.copy()
        B[:, 1:-1] = 0.2 * (A[:, 1:-1] + A[:, :-2] + A[:, 2:] + up[:, 1:-1] + down[:, 1:-1])
        A = B
    return A


def _jacobi3d_global(G, steps):
    A = G.copy()
    for _ in range(steps):
        B = A.copy()
        B[:, 1:-1, 1:-1] = (A[:, 1:-1, 1:-1] + np.roll(A, 1, axis=0)[:, 1:-1, 1:-1]
                            + np.roll(A, -1, axis=0)[:, 1:-1, 1:-1]
                            + A[:, :-2, 1:-1] + A[:, 2:, 1:-1] + A[:, 1:-1, :-2] + A[:, 1:-1, 2:]) / 7.0
        A = B
    return A


class Jacobi2D:
    """`rows` interior rows per PE, `cols` columns, T iterations of `steps_per_iteration`."""

    def __init__(self, module, rows=6, cols=13, T=3, steps_per_iteration=2, seed=7):
        self.module, self.function = module, "jacobi_2d"
        self.rows, self.cols, self.T, self.k, self.seed = rows, cols, T, steps_per_iteration, seed

    def global_grid(self, n_pes):
        return _grid(self.rows * n_pes, self.cols, self.seed)

    def make_args(self, pe, n_pes, dtype=np.float64):
        G = self.global_grid(n_pes)
        r, M = self.rows, self.rows + 2
        A = np.zeros((M, self.cols), dtype=dtype)
        A[1:M - 1] = G[pe * r:(pe + 1) * r]
        A[0] = G[(pe * r - 1) % G.shape[0]]
        A[M - 1] = G[((pe + 1) * r) % G.shape[0]]
        return (A, A.copy(), M, self.cols, self.T)

    def gather(self, per_pe):
        return np.concatenate([np.asarray(a[0])[1:-1] for a in per_pe])

    def expected(self, n_pes):
        return _jacobi2d_global(self.global_grid(n_pes), self.T * self.k)


class Jacobi3D:
    def __init__(self, module="nvshmem_jacobi3d", planes=3, m=6, n=7, T=2, seed=11):
        self.module, self.function = module, "jacobi_3d"
        self.planes, self.m, self.n, self.T, self.seed = planes, m, n, T, seed

    def global_grid(self, n_pes):
        return np.random.default_rng(self.seed).standard_normal((self.planes * n_pes, self.m, self.n))

    def make_args(self, pe, n_pes, dtype=np.float64):
        G = self.global_grid(n_pes)
        p, L = self.planes, self.planes + 2
        A = np.zeros((L, self.m, self.n), dtype=dtype)
        A[1:L - 1] = G[pe * p:(pe + 1) * p]
        A[0] = G[(pe * p - 1) % G.shape[0]]
        A[L - 1] = G[((pe + 1) * p) % G.shape[0]]
        return (A, A.copy(), L, self.m, self.n, self.T)

    def gather(self, per_pe):
        return np.concatenate([np.asarray(a[0])[1:-1] for a in per_pe])

    def expected(self, n_pes):
        return _jacobi3d_global(self.global_grid(n_pes), self.T * 2)


CASES = {
    "jacobi2d_l8": Jacobi2D("nvshmem_jacobi2d_l8", steps_per_iteration=2),
    "jacobi2d_l9": Jacobi2D("nvshmem_jacobi2d_l9", steps_per_iteration=1, T=4),
    "jacobi3d": Jacobi3D(),
}
