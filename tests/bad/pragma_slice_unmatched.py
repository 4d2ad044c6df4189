def f(A, B, M, N):
    #pragma :M=>parallel :K=>simd
    B[:M, :N] = A[:M, :N] * 2.0
