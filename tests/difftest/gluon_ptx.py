"""Compiles the temporally blocked Gluon kernels of a generated module for an H100 (sm_90)
without a GPU, at float32 and float64, with the constexprs and options their launchers' GPU
branches use, and reports each kernel's shared-memory accesses in the PTX. Run by
test_gluon_ptx.py in a subprocess (TRITON_INTERPRET unset before triton loads).

- 2-D (`_appyc_blocked_2d(kernel, ...)`, codegen/triton/gluon2d.rs): 64 x 64 tiles, G = 2 while
  4 * reach * G <= 64, GR = the guard rows, HALO = reach * G, 8 warps, maxnreg 80.
- 3-D (`_appyc_blocked_3d(kernel, ...)`, codegen/triton/gluon3d.rs): the module's GPU tile,
  warps and register cap (`_APPYC_BLOCKED_3D_*`), HALO = reach, a cooperative launch.
- 1-D (`_appyc_blocked(twin, kernel, ...)`, codegen/triton/blocked.rs): W = 2048, G = 64 while
  4 * reach * G <= W, HALO = reach * G, 4 warps, a cooperative launch.

A window of a shared buffer starts at any element (`j - 1`, `i + 1`), so its shared accesses
must be one element wide: no ldmatrix/stmatrix (16-byte rows), no vector ld/st.shared (float32
faulted on the H100 with "misaligned address" when Triton lowered 2-D windows to ldmatrix).

Usage: python gluon_ptx.py MODULE.py RESULT.json
RESULT: [{"kernel", "form", "dtype", "error" (or null), "ops": {PTX memory op: count}}]
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
LAUNCH_2D = re.compile(r"_appyc_blocked_2d\((\w+), \w+, [^,]+, \w+, \w+, \((.*)\), (\d+), (\d+)\) is not None")
LAUNCH_3D = re.compile(r"_appyc_blocked_3d\((\w+), \w+, [^,]+, \w+, \w+, \((.*)\), (\d+), (\d+)\) is not None")
LAUNCH_1D = re.compile(r"_appyc_blocked\(\w+, (\w+), \w+, \((.*?)\), \((.*?)\), (\d+)"
                       r"(?:, state=\((.*?)\), kinds=\"(\w*)\")?\)")
MEMORY_OP = re.compile(r"\b(?:ld|st)\.(?:shared|global)[.a-z0-9:]*|\b(?:ldmatrix|stmatrix)[.a-z0-9]*"
                       r"|\bcp\.async[.a-z0-9]*")


def host_scalars(text):
    """The launch's host scalars, `int(M)` and `float(c)`: their values do not change the code
    here (67 is neither 1 nor a multiple of 16)."""
    return [67 if s.strip().startswith("int(") else 0.3 for s in text.split("), ") if s.strip()]


def compile_ptx(kernel, args, kwargs):
    kwargs = dict(kwargs, debug=False, instrumentation_mode=_jit.knobs.compilation.instrumentation_mode)
    binder = _jit.create_function_from_signature(kernel.signature, kernel.params, BACKEND)
    bound, spec, options = binder(*args, **kwargs)
    options, signature, constexprs, attrs = kernel._pack_args(BACKEND, kwargs, bound, spec, options)
    compiled = triton.compile(GluonASTSource(kernel, signature, constexprs, attrs), target=TARGET,
                              options=options.__dict__)
    return compiled.asm["ptx"]


def ptx_2d(kernel, dtype, m, rows=67, cols=190):
    """The PTX of a 2-D kernel as `_appyc_blocked_2d`'s GPU branch launches it."""
    scalars, reach, guard = host_scalars(m.group(2)), int(m.group(3)), int(m.group(4))
    tile, group = 64, 2
    while group > 1 and 4 * reach * group > tile:
        group -= 1
    arrays = [torch.empty(rows, cols, dtype=dtype) for _ in range(3)]   # _src, _dst, _other
    kwargs = dict(TH=tile, TW=tile, G=group, GR=guard, HALO=reach * group, num_warps=8, maxnreg=80)
    return compile_ptx(kernel, (*arrays, *scalars, rows, cols, 5, 3, 0), kwargs)


def ptx_3d(kernel, dtype, m, mod, shape=(37, 67, 190)):
    """The PTX of a 3-D kernel as `_appyc_blocked_3d`'s GPU branch launches it."""
    scalars, reach, guard = host_scalars(m.group(2)), int(m.group(3)), int(m.group(4))
    ty, tx = mod._APPYC_BLOCKED_3D_TILE
    arrays = [torch.empty(*shape, dtype=dtype) for _ in range(3)]   # _src, _dst, _other
    kwargs = dict(TY=ty, TX=tx, GR=guard, HALO=reach, GRID_SYNC=True,
                  num_warps=mod._APPYC_BLOCKED_3D_WARPS, maxnreg=mod._APPYC_BLOCKED_3D_MAXNREG[0],
                  launch_cooperative_grid=True)
    sync = torch.zeros(1, dtype=torch.int64)
    return compile_ptx(kernel, (*arrays, *scalars, *shape, 5, 3, 0, 3, sync), kwargs)


def ptx_1d(kernel, dtype, m, n=1000):
    """The PTX of a 1-D kernel as `_appyc_blocked`'s GPU branch launches it."""
    count = len([a for a in m.group(2).split(",") if a.strip()])
    scalars, reach = host_scalars(m.group(3)), int(m.group(4))
    registers = [0.5 if k == "f" else 3 for k in (m.group(6) or "")]
    width, group = 2048, 64
    while group > 1 and 4 * reach * group > width:
        group //= 2
    arrays = [torch.empty(n, dtype=dtype) for _ in range(2 * count)]  # the arrays, their scratches
    tail = [torch.zeros(1, dtype=torch.int64)]
    if m.group(6) is not None:
        tail += [*registers, torch.empty(max(len(registers), 1), dtype=torch.float64)]
    kwargs = dict(G=group, W=width, HALO=reach * group, COMPUTE=True, WRITE=True, GRID_SYNC=True,
                  num_warps=4, launch_cooperative_grid=True)
    return compile_ptx(kernel, (*arrays, *scalars, n, 5, width - 2 * reach * group, 3, 0, 3, *tail),
                       kwargs)


def main(module_path, result_path):
    source = open(module_path).read()
    spec = importlib.util.spec_from_file_location("appyc_gluon_ptx", module_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    results = []
    launches = [("2d", m, ptx_2d) for m in LAUNCH_2D.finditer(source)]
    launches += [("1d", m, ptx_1d) for m in LAUNCH_1D.finditer(source)]
    launches += [("3d", m, lambda k, d, m: ptx_3d(k, d, m, mod)) for m in LAUNCH_3D.finditer(source)]
    for form, m, ptx_of in launches:
        name = m.group(1)
        for dtype in (torch.float32, torch.float64):
            record = {"kernel": name, "form": form, "dtype": str(dtype).split(".")[1], "error": None,
                      "ops": {}}
            try:
                for op in MEMORY_OP.findall(ptx_of(getattr(mod, name), dtype, m)):
                    record["ops"][op] = record["ops"].get(op, 0) + 1
            except Exception as exc:  # noqa: BLE001 - the failure is the finding
                record["error"] = f"{type(exc).__name__}: {exc}"[-3000:]
            results.append(record)
    with open(result_path, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
