"""jacobi2d_np.py's relaxation with the convergence test reduced by the sweep itself,
`reduction(max:diff)` (OpenMP's spelling), as a user who knows the clause writes it."""
import numpy as np


def jacobi2d_clause(A, B, tol, max_iter):
    N = A.shape[0]
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        diff = 0.0
        #pragma parallel for reduction(max:diff)
        for i in range(1, N - 1):
            #pragma simd
            for j in range(1, N - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
                diff = max(diff, abs(B[i, j] - A[i, j]))
        A, B = B, A
        it += 1
    return it
