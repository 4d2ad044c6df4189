"""appyc-aot: the appyc compiler (APPy-annotated NumPy to Triton) from Python.

`compile(source, filename)` returns the generated module's text, exactly as the `appyc` command
writes it, and raises `CompileError` with the `file:line:col` diagnostic; warnings (a comment
that looks like a pragma but is not one) are issued as `CompileWarning`s, or raise
`CompileError` with `deny_warnings=True`. `@jit` compiles a
function the first time it is called and runs the generated launcher from then on.
`appyc_aot.nvshmem` is the pure-Python (NumPy) reference of the multi-GPU `nvshmem` calls; it
imports without the compiler extension.

The import name is `appyc_aot`, not `appyc`: that name on PyPI is the original APPy package.
"""
try:
    from ._native import CompileError, CompileWarning, __version__, compile
    from ._jit import jit
except ImportError as _e:  # a source checkout without the built extension: `nvshmem` still works
    _missing = _e

    def compile(*args, **kwargs):  # noqa: A001 - the package's API name
        raise ImportError("appyc_aot's compiler extension is not built (maturin build)") from _missing

    jit = compile
    CompileError = RuntimeError
    CompileWarning = UserWarning
    __version__ = "0+source"

__all__ = ["CompileError", "CompileWarning", "compile", "jit", "__version__"]
