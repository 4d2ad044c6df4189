def product(x):
    p = 1.0
    #pragma parallel for reduction(*:p)
    for i in range(x.shape[0]):
        p *= x[i]
    return p
