def f(A, B, N):
    #pragma parallel for simd(
    for i in range(N):
        A[i] = B[i]
