def columns(A, B, N, T):
    #pragma distribute(A, B) axis(1)
    for t in range(T):
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = A[i - 1] + A[i + 1]
