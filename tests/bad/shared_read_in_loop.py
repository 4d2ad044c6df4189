def running(x, y):
    s = 0.0
    #pragma parallel for shared(s)
    for i in range(x.shape[0]):
        s += x[i]
        y[i] = s
