def outer(x):
    def inner(y):
        #pragma parallel for
        for i in range(y.shape[0]):
            y[i] = 2.0 * y[i]
    inner(x)
