def f(A, B, M, N):
    #pragma :M=>parallel,le(16 :N=>simd
    A[:M, :N] = B[:M, :N] * 2.0
