"""appyc-aot: the appyc compiler (APPy-annotated NumPy to Triton) from Python.

`compile(source, filename)` returns the generated module's text, exactly as the `appyc` command
writes it, and raises `CompileError` with the `file:line:col` diagnostic; warnings (a comment
that looks like a pragma but is not one) are issued as `CompileWarning`s, or raise
`CompileError` with `deny_warnings=True`. `@jit` compiles a
function the first time it is called and runs the generated launcher from then on.

The import name is `appyc_aot`, not `appyc`: that name on PyPI is the original APPy package.
"""
from ._native import CompileError, CompileWarning, __version__, compile
from ._jit import jit

__all__ = ["CompileError", "CompileWarning", "compile", "jit", "__version__"]
