def f(A, B, N, T, flags):
    for t in range(1, T):
        nvshmem.SignalWait(flags[0])
        #pragma parallel for
        for i in range(N):
            B[i] = A[1, i]
