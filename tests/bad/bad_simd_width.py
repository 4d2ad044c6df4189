def f(A, N, M):
    #pragma parallel for
    for i in range(N):
        #pragma simd(100)
        for j in range(M):
            A[i, j] = 0.0
