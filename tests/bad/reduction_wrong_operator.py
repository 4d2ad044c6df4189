def largest(x):
    m = 0.0
    #pragma parallel for simd reduction(max:m)
    for i in range(x.shape[0]):
        m += x[i]
    return m
