def f(A, B, M, N):
    #pragma parallel for
    for i in range(M):
        B[i, :N] = A[i, :N].reshape(N)
