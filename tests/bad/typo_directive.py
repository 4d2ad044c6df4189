def f(A, N):
    #pragma paralel for
    for i in range(N):
        A[i] = 0.0
