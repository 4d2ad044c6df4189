def total(x):
    s = 0.0
    #pragma parallel for simd reductoin(+:s)
    for i in range(x.shape[0]):
        s += x[i]
    return s
