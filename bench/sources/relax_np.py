"""relax_tol's math with the convergence test as NumPy code: `diff = np.max(np.abs(...))` bare in
the `while`, no reduction clause (bench/gpu_bare_reduction.py times it against the natural
set's relax_tol, which reduces `diff` by `reduction(max:diff)`)."""
import numpy as np


def relax_np(A, B, tol, max_iter):
    N = A.shape[0]
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
        diff = np.max(np.abs(B[1:N - 1] - A[1:N - 1]))
        A, B = B, A
        it += 1
    return it
