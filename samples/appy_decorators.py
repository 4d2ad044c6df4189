"""A program written for the original APPy: `import appy` in several spellings and `@appy.jit`
decorators, with and without options, on compiled functions and on one without a pragma. The
output imports none of it (it runs where APPy is not installed): appyc drops every import of
appy and every decorator from it, and compiles `appy.vidx`/`appy.MVL` inside the region.

Exercises: `import numpy as np, appy` (both go: nothing outside the compiled functions uses
numpy), `import appy as ap`, `from appy import jit as appy_jit`, `@appy.jit(auto_simd=True)`,
`@ap.jit`, a decorator over two lines, `@appy_jit` on a function without a pragma, and `import
appy` inside a function.
"""
import numpy as np, appy
import appy as ap
from appy import jit as appy_jit


@appy.jit(auto_simd=True)
def scale(x, y, a):
    #pragma parallel for simd
    for i in range(x.shape[0]):
        y[i] = a * x[i]


@ap.jit
def strips(x, y, N):
    import appy
    #pragma parallel for
    for i0 in range(0, N, appy.MVL):
        vi = appy.vidx(i0, appy.MVL, N)
        y[vi] = x[vi] + 1.0


@appy.jit(
    auto_simd=True,
)
def total(x):
    s = 0.0
    #pragma parallel for simd reduction(+:s)
    for i in range(x.shape[0]):
        s += x[i]
    return s


@appy_jit
def twice(x, y):
    # No pragma: appyc copies it as it is, without its decorator.
    y[:] = 2.0 * x
