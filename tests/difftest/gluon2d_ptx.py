"""Compiles the 2-D temporally blocked Gluon kernels of a generated module (every
`_appyc_blocked_2d(kernel, ...)` launch in it, codegen/triton/gluon2d.rs) for an H100 (sm_90)
without a GPU, at float32 and float64, with the constexprs and options `_appyc_blocked_2d`'s GPU
branch launches them with (64 x 64 tiles, G = 2 while 4 * reach * G <= 64, GR = the guard rows,
HALO = reach * G, 8 warps, maxnreg 80), and reports each kernel's shared-memory accesses in the
PTX. Run by test_gluon2d_ptx.py in a subprocess (TRITON_INTERPRET unset before triton loads).

A window of the tile buffer starts at any element (`j - 1`), so its shared accesses must be one
element wide: no ldmatrix/stmatrix (16-byte rows), no vector ld/st.shared (float32 faulted on
the H100 with "misaligned address" when Triton lowered the windows to ldmatrix).

Usage: python gluon2d_ptx.py MODULE.py RESULT.json
RESULT: [{"kernel", "dtype", "error" (or null), "ops": {PTX memory op: count}}]
"""
import importlib.util
import json
import os
import re
import sys

os.environ.pop("TRITON_INTERPRET", None)  # must happen before triton is imported

import torch  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler.compiler import make_backend  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402
from triton.runtime import jit as _jit  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
BACKEND = make_backend(TARGET)
LAUNCH = re.compile(r"_appyc_blocked_2d\((\w+), \w+, \w+, \w+, \w+, \((.*)\), (\d+), (\d+)\) is not None")
MEMORY_OP = re.compile(r"\b(?:ld|st)\.(?:shared|global)[.a-z0-9:]*|\b(?:ldmatrix|stmatrix)[.a-z0-9]*"
                       r"|\bcp\.async[.a-z0-9]*")


def compile_gluon(kernel, dtype, scalars, reach, guard, rows=67, cols=190):
    """The PTX of `kernel` as the launcher's GPU branch would launch it on `dtype` arrays."""
    tile, group = 64, 2
    while group > 1 and 4 * reach * group > tile:
        group -= 1
    arrays = [torch.empty(rows, cols, dtype=dtype) for _ in range(3)]   # _src, _dst, _other
    kwargs = dict(TH=tile, TW=tile, G=group, GR=guard, HALO=reach * group, num_warps=8, maxnreg=80,
                  debug=False, instrumentation_mode=_jit.knobs.compilation.instrumentation_mode)
    binder = _jit.create_function_from_signature(kernel.signature, kernel.params, BACKEND)
    bound, spec, options = binder(*arrays, *scalars, rows, cols, 5, 3, 0, **kwargs)
    options, signature, constexprs, attrs = kernel._pack_args(BACKEND, kwargs, bound, spec, options)
    compiled = triton.compile(GluonASTSource(kernel, signature, constexprs, attrs), target=TARGET,
                              options=options.__dict__)
    return compiled.asm["ptx"]


def main(module_path, result_path):
    source = open(module_path).read()
    spec = importlib.util.spec_from_file_location("appyc_gluon2d_ptx", module_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    results = []
    for m in LAUNCH.finditer(source):
        name, reach, guard = m.group(1), int(m.group(3)), int(m.group(4))
        # The launch's host scalars: `int(M)` and `float(c)` (their values do not change the code
        # here: 67 is neither 1 nor a multiple of 16).
        scalars = [67 if s.strip().startswith("int(") else 0.3
                   for s in m.group(2).split("), ") if s.strip()]
        for dtype in (torch.float32, torch.float64):
            record = {"kernel": name, "dtype": str(dtype).split(".")[1], "error": None, "ops": {}}
            try:
                ptx = compile_gluon(getattr(mod, name), dtype, scalars, reach, guard)
                for op in MEMORY_OP.findall(ptx):
                    record["ops"][op] = record["ops"].get(op, 0) + 1
            except Exception as exc:  # noqa: BLE001 - the failure is the finding
                record["error"] = f"{type(exc).__name__}: {exc}"[-3000:]
            results.append(record)
    with open(result_path, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
