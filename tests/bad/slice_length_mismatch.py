def f(A, B, N):
    #pragma parallel for
    for i in range(N):
        B[i, 1:N] = A[i, :N]
