"""The multi-PE samples: per-PE arguments cut from one global grid, and the global NumPy result.

Shared by the differential tests (test_nvshmem.py: the reference module and the CPU stand-in of
the compiled code) and scripts/gpu_nvshmem.py (the GPU run): each case gives
`make_args(pe, n_pes)` (NumPy arrays of one PE, halos included), `expected(n_pes)` (the global
result of a plain single-array NumPy run) and `gather(per_pe_args)` (the PEs' slabs or blocks
glued back; only each PE's first array is read, whole, halos included).
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


def process_grid(n_pes, dims):
    """The grid shape the *_grid samples derive from n_pes (their process_grid_2d/_3d): the
    last axis takes the largest divisor whose `dims`-th power is at most n_pes, the rest recurses;
    2 PEs are (2, 1) or (2, 1, 1), 4 are (2, 2) or (2, 2, 1), 8 are (4, 2) or (2, 2, 2)."""
    if dims == 1:
        return (n_pes,)
    last = max(d for d in range(1, n_pes + 1) if n_pes % d == 0 and d ** dims <= n_pes)
    return process_grid(n_pes // last, dims - 1) + (last,)


def _jacobi_periodic(G, steps):
    """The 2-D 5-point or 3-D 7-point mean on a grid periodic in every axis."""
    A = G.copy()
    for _ in range(steps):
        s = A.copy()
        for ax in range(A.ndim):
            s += np.roll(A, 1, axis=ax) + np.roll(A, -1, axis=ax)
        A = 0.2 * s if A.ndim == 2 else s / 7.0
    return A


class JacobiGrid:
    """The *_grid samples: a global grid periodic in every axis, cut into blocks of `block`
    interior points per PE along a process grid of len(block) axes (process_grid); each PE's
    arrays are its block with a one-point halo ring (the wrapped neighbours' values)."""

    def __init__(self, module, function, block, T, seed):
        self.module, self.function = module, function
        self.block, self.T, self.seed = tuple(block), T, seed

    def grid(self, n_pes):
        return process_grid(n_pes, len(self.block))

    def global_grid(self, n_pes):
        shape = tuple(p * b for p, b in zip(self.grid(n_pes), self.block))
        return np.random.default_rng(self.seed).standard_normal(shape)

    def make_args(self, pe, n_pes, dtype=np.float64):
        G = self.global_grid(n_pes)
        at = np.unravel_index(pe, self.grid(n_pes))  # row-major, as the samples number PEs
        idx = [np.arange(c * b - 1, (c + 1) * b + 1) % g for c, b, g in zip(at, self.block, G.shape)]
        A = G[np.ix_(*idx)].astype(dtype)
        return (A, A.copy(), *A.shape, self.T)

    def gather(self, per_pe):
        grid = self.grid(len(per_pe))
        inner = tuple(slice(1, -1) for _ in grid)
        blocks = np.empty(grid, dtype=object)
        for pe, args in enumerate(per_pe):
            blocks[np.unravel_index(pe, grid)] = np.asarray(args[0])[inner]
        return np.block(blocks.tolist())

    def expected(self, n_pes):
        return _jacobi_periodic(self.global_grid(n_pes), self.T * 2)


def Jacobi2DGrid(module="nvshmem_jacobi2d_grid", rows=5, cols=6, T=3, seed=13):
    return JacobiGrid(module, "jacobi_2d", (rows, cols), T, seed)


def Jacobi3DGrid(module="nvshmem_jacobi3d_grid", planes=3, m=4, n=5, T=2, seed=17):
    return JacobiGrid(module, "jacobi_3d", (planes, m, n), T, seed)


CASES = {
    "jacobi2d_l8": Jacobi2D("nvshmem_jacobi2d_l8", steps_per_iteration=2),
    "jacobi2d_l9": Jacobi2D("nvshmem_jacobi2d_l9", steps_per_iteration=1, T=4),
    # Host scalars in the loop: the signal value and a count of sweeps it returns.
    "host_scalars": Jacobi2D("nvshmem_host_scalars", steps_per_iteration=2),
    "jacobi3d": Jacobi3D(),
    "jacobi2d_grid": Jacobi2DGrid(),
    "jacobi3d_grid": Jacobi3DGrid(),
}


class Distributed:
    """A `#pragma distribute` sample: every PE calls `function` with the same global arrays
    (plain tensors, not symmetric) and must get the sequential NumPy result back in all of them.
    `make_args(pe, n_pes)` gives them; `expected()` is the unchanged source run by NumPy on one
    copy (the program's meaning, whatever the PE count)."""

    symmetric_args = False

    def __init__(self, module, function, shape, T, seed, extra=(), calls=1, blocks=False, arrays=2):
        self.module, self.function = module, function
        self.shape, self.T, self.seed, self.extra = tuple(shape), T, seed, tuple(extra)
        # Calls of the function in a row on the same arrays (the second reuses the blocks).
        self.calls = calls
        # Each PE passes its block of rows (`appyc_block`) instead of the global arrays.
        self.blocks = blocks
        self.arrays = arrays

    def make_args(self, pe, n_pes, dtype=np.float64):
        rng = np.random.default_rng(self.seed)
        A = rng.standard_normal(self.shape).astype(dtype)
        arrays = [A, A + 0.5, A - 0.25][:self.arrays]
        return (*arrays, *self.shape, *self.extra, self.T)

    def expected(self):
        import importlib

        fn = getattr(importlib.import_module(self.module), self.function)
        args = self.make_args(0, 1)
        args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        for _ in range(self.calls):
            fn(*args)
        return [a for a in args if isinstance(a, np.ndarray)]


# Odd sizes, and row counts that 2, 3 and 4 PEs do not divide evenly (19 = 10 + 9 = 7 + 6 + 6
# = 5 + 5 + 5 + 4).
DIST_CASES = {
    "distribute_jacobi2d": Distributed("distribute_jacobi2d", "jacobi_2d", (19, 13), T=3, seed=29),
    "distribute_jacobi2d_tall": Distributed("distribute_jacobi2d", "jacobi_2d", (23, 7), T=4, seed=31),
    "distribute_jacobi2d_twice": Distributed("distribute_jacobi2d", "jacobi_2d", (17, 9), T=2, seed=47, calls=2),
    "distribute_blocks": Distributed("distribute_stencils", "smooth_copy_back", (19, 10), T=3, seed=59, blocks=True),
    # Halo 2, acknowledgements: 21 rows leave 5 for the fourth of 4 PEs (>= the halo).
    "distribute_copy_back": Distributed("distribute_stencils", "smooth_copy_back", (21, 11), T=3, seed=37),
    "distribute_jacobi1d": Distributed("distribute_stencils", "jacobi_1d", (29,), T=4, seed=41),
    "distribute_host_scalars": Distributed("distribute_stencils", "relax_counted", (29,), T=5, seed=67),
    "distribute_heat3d": Distributed("distribute_stencils", "heat_3d", (11, 6, 5), T=2, seed=43),
    "distribute_three_sweeps": Distributed("distribute_stencils", "three_sweeps", (27,), T=4, seed=61, arrays=3),
}
