"""NumPy stand-in for the `appy` module, used when samples run as plain NumPy (the reference)."""
import numpy as np

MVL = 128


def vidx(start, size, bound):
    """Indices start, start + 1, ... below min(start + size, bound)."""
    return np.arange(start, min(start + size, bound))
