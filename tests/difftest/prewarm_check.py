"""Checks a generated module's start-up builds (`_appyc_prewarm` in the prelude) against the
installed Triton, without a GPU. Run by test_prewarm.py in a subprocess, because the pytest
process has TRITON_INTERPRET=1 and the prewarm is off under the interpreter.

Triton's C compiler runs are replaced by a recorder (`build._build`: writes a placeholder file,
sleeps `--build-s` so that a waiting caller shows), and Triton's loader of C modules by one that
records what Triton asks for, so the check needs neither libcuda nor a GPU. Then:

1. importing the module starts the `cuda_utils` build and the hashing of Triton's installation;
2. samples/jacobi_2d.py's plain persistent (Triton) and blocked (Gluon) kernels are bound for sm_90 as
   `JITFunction.run` would bind it (as gpu_compile.py does), Triton's own `_call_hook` runs the
   module's `jit_cache_hook`, the kernel is compiled, and Triton's own `CudaLauncher` is built
   for the compiled kernel: the launcher source it asks for must be the one built ahead, and it
   must have waited for that build rather than building it again.

Usage: python prewarm_check.py JACOBI_2D_MODULE.py RESULT.json
RESULT: {"imported": [C modules built at import], "triton_key": bool,
         "kernels": {name: {"asked", "built_ahead", "builds_of_it", "waited"}}}
"""
import importlib.util
import json
import os
import sys
import time

os.environ.pop("TRITON_INTERPRET", None)  # must happen before triton is imported

import torch  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.backends.nvidia import driver as nvidia  # noqa: E402
from triton.compiler.compiler import ASTSource, make_backend  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource, GluonJITFunction  # noqa: E402
from triton.runtime import build, cache, jit as _jit  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
BACKEND = make_backend(TARGET)
BUILD_S = float(os.environ.get("PREWARM_CHECK_BUILD_S", "0.5"))

built = []    # (name, source text, start, end) of every C compiler run
asked = []    # (name, source text, time) of every module Triton's driver asked for


def fake_build(name, src, srcdir, library_dirs, include_dirs, libraries, ccflags):
    start = time.perf_counter()
    with open(src) as f:
        text = f.read()
    time.sleep(BUILD_S)
    so = os.path.join(srcdir, name + ".so")
    with open(so, "wb") as f:
        f.write(b"placeholder")
    built.append((name, text, start, time.perf_counter()))
    return so


class FakeModule:
    launch = None


def fake_load(src, name, *args, **kwargs):
    asked.append((name, src, time.perf_counter()))
    return FakeModule()


build._build = fake_build
nvidia.compile_module_from_src = fake_load
nvidia.library_dirs = lambda: []  # no libcuda here; the flags do not enter the cache key


def bind_and_compile(kernel, args, kwargs):
    kwargs = dict(kwargs, debug=False, instrumentation_mode=_jit.knobs.compilation.instrumentation_mode)
    binder = _jit.create_function_from_signature(kernel.signature, kernel.params, BACKEND)
    bound, spec, options = binder(*args, **kwargs)
    options, signature, constexprs, attrs = kernel._pack_args(BACKEND, kwargs, bound, spec, options)
    key = (tuple(spec), str(options))
    kernel._call_hook(_jit.knobs.runtime.jit_cache_hook, key, signature, 0, constexprs, options,
                      [attrs], False)
    source = GluonASTSource if isinstance(kernel, GluonJITFunction) else ASTSource
    return triton.compile(source(kernel, signature, constexprs, attrs), target=TARGET,
                          options=options.__dict__)


def launches(mod):
    """The two kernels of samples/jacobi_2d.py with arguments as their launchers pass them."""
    a, b = torch.empty(67, 190, dtype=torch.float64), torch.empty(67, 190, dtype=torch.float64)
    sync = torch.zeros(1, dtype=torch.int64)
    yield mod._jacobi_2d_persistent0, (b, a, 67, 190, 190, 1, 190, 1, 0, 10, sync), dict(
        MVL=512, GRID_SYNC=True, ROW_BLOCK=4, num_warps=4, launch_cooperative_grid=True)
    yield mod._jacobi_2d_persistent0_blocked_gluon, (a, b, b, 67, 190, 67, 190, 5, 3, 0), dict(
        TH=64, TW=64, G=2, GR=1, HALO=2, num_warps=8, maxnreg=80)


def main(module_path, result_path):
    spec = importlib.util.spec_from_file_location("appyc_prewarm_check", module_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    time.sleep(BUILD_S + 0.5)
    result = {"imported": [name for name, *_ in built], "kernels": {},
              "triton_key": bool(getattr(cache.triton_key, "_appyc", False))}
    for kernel, args, kwargs in launches(mod):
        compiled = bind_and_compile(kernel, args, kwargs)
        started = time.perf_counter()
        nvidia.CudaLauncher(compiled.src, compiled.metadata)  # asks for Triton's own source
        asked_now = [a for a in asked if a[0] == "__triton_launcher" and a[2] >= started]
        text = asked_now[-1][1] if asked_now else None
        builds = [b for b in built if b[0] == "__triton_launcher" and b[1] == text]
        result["kernels"][kernel.fn.__name__] = {
            "asked": len(asked_now),
            "builds_of_it": len(builds),
            "waited": bool(builds and asked_now[-1][2] >= builds[-1][3]),
        }
    with open(result_path, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
