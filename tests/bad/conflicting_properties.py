def f(A, B, M, N):
    #pragma :M=>parallel,simd :N=>simd
    B[:M, :N] = A[:M, :N]
