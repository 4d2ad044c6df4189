def f(A, B, M, N):
    #pragma :M=>parallel :N=>le(100)
    B[:M, :N] = A[:M, :N] * 2.0
