def f(A, B, M, N):
    #pragma :M=>parallel, :N=>simd
    A[:M, :N] = B[:M, :N] * 2.0
