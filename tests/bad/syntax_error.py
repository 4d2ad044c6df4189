def f(A, N):
    #pragma parallel for
    for i in range(N)
        A[i] = 0.0
