def f(A, B, N, T):
    for t in range(1, T):
        nvshmem.Putmen(A[0, :], A[1, :], 0)
        #pragma parallel for
        for i in range(N):
            B[i] = A[1, i]
