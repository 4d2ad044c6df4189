def f(A, N):
    #pragma parallel for
    A[0] = 1.0
