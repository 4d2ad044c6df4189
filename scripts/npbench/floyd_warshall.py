"""floyd_warshall (PolyBench / NPBench): all-pairs shortest paths, N relaxation rounds.

Math: for each k, path_ij = min(path_ij, path_ik + path_kj). NPBench `paper` preset: N = 2800
(int32 distances).
"""
import numpy as np


def floyd_warshall(path):
    N = path.shape[0]
    for k in range(N):
        # Row k and column k do not change in round k (path_kk >= 0), so updating in place
        # while other workers read them is safe.
        #pragma parallel for
        for i in range(N):
            path[i, :N] = np.minimum(path[i, :N], path[i, k] + path[k, :N])
