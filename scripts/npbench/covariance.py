"""covariance (PolyBench / NPBench): the M x M covariance matrix of N samples, returned.

Math: mean_j = sum_i data[i, j] / float_n; data[i, j] -= mean_j (data is centred in place);
cov[i, j] = sum_k data[k, i] * data[k, j] / (float_n - 1). data is N x M. NPBench `paper`
preset: M = 1200, N = 1400 (float64).
"""
import numpy as np


def covariance(M, float_n, data):
    N = data.shape[0]
    mean = np.empty(M)
    # Column means: columns are contiguous lanes, each worker walks the rows.
    #pragma parallel for simd
    for j in range(M):
        s = 0.0
        for i in range(N):
            s += data[i, j]
        mean[j] = s / float_n
    #pragma parallel for
    for i in range(N):
        #pragma simd
        for j in range(M):
            data[i, j] -= mean[j]
    cov = np.empty((M, M))
    # Every (i, j), both triangles: a column dot product per element (no mirrored store).
    #pragma parallel for
    for i in range(M):
        #pragma simd
        for j in range(M):
            s = 0.0
            for k in range(N):
                s += data[k, i] * data[k, j]
            cov[i, j] = s / (float_n - 1.0)
    return cov
