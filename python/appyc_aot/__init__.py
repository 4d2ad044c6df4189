"""appyc-aot: the appyc compiler (APPy-annotated NumPy to Triton) from Python.

`compile(source, filename)` returns the generated module's text, exactly as the `appyc` command
writes it, and raises `CompileError` with the `file:line:col` diagnostic. `@jit` compiles a
function the first time it is called and runs the generated launcher from then on.

The import name is `appyc_aot`, not `appyc`: that name on PyPI is the original APPy package.
"""
from ._native import CompileError, __version__, compile
from ._jit import jit

__all__ = ["CompileError", "compile", "jit", "__version__"]
