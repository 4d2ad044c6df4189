"""relax_tol: 1-D damped Jacobi relaxation until the largest change is at most a tolerance.

Math per sweep: B_i = 0.25 A_{i-1} + 0.5 A_i + 0.25 A_{i+1} on the interior (ends fixed);
diff = max_i |B_i - A_i|; swap A and B; stop when diff <= tol or after max_iter sweeps.
Returns the number of sweeps. `paper`: N = 2**16 (float64), tol set by the benchmark so that
the loop stops on it after 3000 sweeps (max_iter = 6000 as a cap).
"""
import numpy as np


def relax_tol(A, B, tol, max_iter):
    N = A.shape[0]
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        diff = 0.0
        #pragma parallel for simd reduction(max:diff)
        for i in range(1, N - 1):
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
            diff = max(diff, abs(B[i] - A[i]))
        A, B = B, A
        it += 1
    return it
