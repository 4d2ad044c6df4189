def f(A, B, N):
    #PRAGMA parallel for
    for i in range(N):
        A[i] = 0.0
    # pragma parallel for
    for i in range(N):
        B[i] = 1.0
    #pragmaparallel for
    for i in range(N):
        B[i] = 2.0
    # pragma: no cover
    #pragmatic comments stay quiet
    #pragma parallel for
    for i in range(N):
        A[i] = A[i] + 1.0
