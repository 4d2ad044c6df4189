"""A 2-D Jacobi relaxation to a tolerance as NumPy users write it: the sweep as loops with
`parallel for` / `simd`, the convergence test bare NumPy code, `A, B = B, A` (bench/
gpu_tolerance_loops.py times it against jacobi2d_clause.py and JAX's `lax.while_loop`)."""
import numpy as np


def jacobi2d_np(A, B, tol, max_iter):
    N = A.shape[0]
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        #pragma parallel for
        for i in range(1, N - 1):
            #pragma simd
            for j in range(1, N - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        diff = np.max(np.abs(B[1:N - 1, 1:N - 1] - A[1:N - 1, 1:N - 1]))
        A, B = B, A
        it += 1
    return it
