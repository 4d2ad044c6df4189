def lower_times_upper(A, B):
    # Iteration i reads rows k > i of B, which iterations k write: a race.
    #pragma parallel for
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            s = 0.0
            #pragma simd
            for k in range(i + 1, A.shape[0]):
                s += A[k, i] * B[k, j]
            B[i, j] += s
