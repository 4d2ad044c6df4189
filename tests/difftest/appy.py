"""NumPy stand-in for the `appy` module, used when samples run as plain NumPy (the reference).

Only the reference run may see it: the generated modules are imported and run where `appy`
cannot be imported (test_samples.without_appy), as on a machine without APPy.
"""
import numpy as np

MVL = 128


def vidx(start, size, bound):
    """Indices start, start + 1, ... below min(start + size, bound)."""
    return np.arange(start, min(start + size, bound))


def jit(fn=None, **_options):
    """`@appy.jit` and `@appy.jit(...)`: the function runs as the NumPy program it is."""
    return fn if fn is not None else (lambda f: f)
