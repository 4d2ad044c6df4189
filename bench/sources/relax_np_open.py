"""relax_np.py with the test over open slices, `B[1:-1] - A[1:-1]`, as NumPy code usually spells
it (bench/gpu_tolerance_loops.py --bare-suffix _open)."""
import numpy as np


def relax_np(A, B, tol, max_iter):
    N = A.shape[0]
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
        diff = np.max(np.abs(B[1:-1] - A[1:-1]))
        A, B = B, A
        it += 1
    return it
