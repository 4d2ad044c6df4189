import appy


@appy.jit
def strip_indices(i0, N):
    # No pragma: appyc does not compile this function, so `appy.vidx` would stay.
    return appy.vidx(i0, appy.MVL, N)
