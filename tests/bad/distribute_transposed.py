def transpose_steps(A, B, N, T):
    #pragma distribute(A, B)
    for t in range(T):
        #pragma parallel for
        for i in range(N):
            #pragma simd
            for j in range(N):
                B[i, j] = A[j, i]
        #pragma parallel for
        for i in range(N):
            #pragma simd
            for j in range(N):
                A[i, j] = B[i, j]
