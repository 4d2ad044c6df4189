def f(A, items):
    #pragma parallel for
    for i in items:
        A[i] = 0.0
