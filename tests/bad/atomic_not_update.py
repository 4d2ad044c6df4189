def f(A, B, N):
    #pragma parallel for
    for i in range(N):
        #pragma atomic
        A[i] = B[i]
