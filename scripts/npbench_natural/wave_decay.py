"""wave_decay: a 1-D wave (u displacement, v velocity) stepped with a time step that shrinks.

Math per step: v_i += dt * (u_{i-1} - 2 u_i + u_{i+1}) on the interior; u_i += dt * v_i
everywhere (semi-implicit Euler, stable for dt <= 1); then dt *= decay, a host scalar.
Returns the last dt. `paper`: N = 2**20 points, T = 1000 steps (float64).
"""
import numpy as np


def wave_decay(T, u, v, dt, decay):
    N = u.shape[0]
    for t in range(T):
        #pragma parallel for simd
        for i in range(1, N - 1):
            v[i] = v[i] + dt * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        #pragma parallel for simd
        for i in range(N):
            u[i] = u[i] + dt * v[i]
        dt = dt * decay
    return dt
