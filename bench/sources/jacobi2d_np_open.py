"""jacobi2d_np.py with the test over open slices, `B[1:-1, 1:-1] - A[1:-1, 1:-1]`, as NumPy code
usually spells it, one size `N` for both dimensions (bench/gpu_tolerance_loops.py --bare-suffix
_open). The sweep covers N - 2 columns and the test B.shape[1] - 2: the same only for a square
array, which appyc cannot assume, so the test stays a phase of its own."""
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
        diff = np.max(np.abs(B[1:-1, 1:-1] - A[1:-1, 1:-1]))
        A, B = B, A
        it += 1
    return it
