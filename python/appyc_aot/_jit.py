"""`@jit`: compile a function's own source with appyc at its first call.

The source comes from `inspect` (which also works for notebook cells), without its decorators and
padded so that diagnostics give the line numbers of the original file or cell. The generated module
is written to a cache directory (Triton reads kernel sources from files) and executed in a copy of
the function's globals, so the names the function uses keep resolving. Compiled modules are cached
by a hash of the source, the options and the compiler version: in this process, and on disk.
"""
import ast
import functools
import hashlib
import inspect
import os
import textwrap
from pathlib import Path

from ._native import __version__, compile as _compile

_launchers = {}


def _cache_dir() -> Path:
    base = os.environ.get("APPYC_AOT_CACHE")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "appyc-aot"


def _function_source(fn):
    """The function's source from its `def` line on, dedented, with the lines before it blank
    (so line numbers match the file), and the file name to report errors against."""
    lines, first = inspect.getsourcelines(fn)
    text = textwrap.dedent("".join(lines))
    node = ast.parse(text).body[0]
    if not isinstance(node, ast.FunctionDef):
        raise TypeError(f"@jit applies to functions, not {type(node).__name__}")
    body = "".join(text.splitlines(True)[node.lineno - 1:])
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    return "\n" * (first + node.lineno - 2) + body, filename


def _launcher(fn, mvl, auto_simd):
    source, filename = _function_source(fn)
    key = hashlib.sha256(
        repr((__version__, source, filename, mvl, auto_simd)).encode()).hexdigest()[:32]
    if key not in _launchers:
        path = _cache_dir() / f"{fn.__name__}_{key}.py"
        if not path.exists():
            text = _compile(source, filename, mvl=mvl, auto_simd=auto_simd)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(text)
            os.replace(tmp, path)  # never a partial module, even with concurrent first calls
        namespace = dict(fn.__globals__)
        namespace.update(__name__=f"appyc_aot.jit.{fn.__name__}", __file__=str(path))
        exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102
        _launchers[key] = namespace[fn.__name__]
    return _launchers[key]


def jit(fn=None, *, mvl=None, auto_simd=True):
    """Compile `fn` with appyc at its first call (`@jit` or `@jit(mvl=256)`); later calls run
    the generated launcher directly. `wrapper.launcher()` returns that launcher (compiling it
    if needed); compile errors raise `appyc_aot.CompileError` at the first call."""

    def wrap(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            return launcher()(*args, **kwargs)

        def launcher():
            return _launcher(f, mvl, auto_simd)

        wrapper.launcher = launcher
        return wrapper

    return wrap(fn) if fn is not None else wrap
