"""Compiles every kernel a generated module launches for an H100 (sm_90), without a GPU.

Run by test_gpu_compile.py in a subprocess, because the pytest process has TRITON_INTERPRET=1
(see conftest.py) and the interpreter neither type-checks kernels nor wraps them in
`triton.autotune`. Here TRITON_INTERPRET is unset, so the generated module is imported as it would
be on a GPU machine. Then each case's function is called on CPU torch tensors with two launch
entry points replaced:

* `JITFunction.run` does not launch: it binds the arguments with Triton's own binder built for a
  CUDA sm_90 backend (so the signature, the constexprs -- MVL, integers equal to 1 -- and the
  16-byte alignment attributes are exactly what a real launch would specialise on), packs them with
  `JITFunction._pack_args` as `run` does, and calls `triton.compile(ASTSource(...),
  target=GPUTarget("cuda", 90, 32))`. The result (ok, or the Triton error) is recorded.
* `_AppycTuning.tune` (the generated module's tuner) times nothing: it launches every candidate
  configuration (MVL, num_warps) once, as its timing runs would, and `_appyc_persistent` makes
  the one cooperative launch of a persistent kernel (GRID_SYNC on), without the occupancy query.

Each distinct (kernel, signature, constexprs, attributes, options) is compiled once per process.

Usage: python gpu_compile.py REQUEST.json RESULT.json
REQUEST: {"cases": [case ids], "modules": {sample: path of the generated module}}
RESULT:  {case id: {"host_error": str or null, "compiles": [{"kernel", "mvl", "signature",
          "constexprs", "ok", "error"}], "candidates": {kernel: [its tuner's candidate MVLs]}}}
"""
import json
import os
import sys
import traceback
from pathlib import Path

os.environ.pop("TRITON_INTERPRET", None)  # must happen before triton is imported

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler.compiler import ASTSource, make_backend  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource, GluonJITFunction  # noqa: E402
from triton.runtime import jit as _jit  # noqa: E402

from cases import CASES  # noqa: E402
from test_samples import load_generated, materialize, seed_for, without_appy  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
BACKEND = make_backend(TARGET)

_binders = {}        # id(JITFunction) -> (that JITFunction, its binder for the sm_90 backend)
_compiled = {}       # (kernel, signature, constexprs, attrs, options) -> error text or None
_records = None      # the list the current case's compiles go to
_candidates = None   # {kernel: its tuner's candidate MVLs} for the current case


def _binder(fn):
    # The entry holds the function: each case loads its module afresh, so a freed kernel's id can
    # come back for another kernel, whose arguments the old binder would then reject (a CI run
    # failed `_relax_counted_distributed` with the arguments of another kernel that way).
    held, b = _binders.get(id(fn), (None, None))
    if held is not fn:
        b = _jit.create_function_from_signature(fn.signature, fn.params, BACKEND)
        _binders[id(fn)] = (fn, b)
    return b


def _short_error(exc):
    text = f"{type(exc).__name__}: {exc}".strip()
    return text if len(text) < 6000 else text[:6000] + "\n... (truncated)"


def compiling_run(self, *args, grid, warmup, **kwargs):
    """Stands in for JITFunction.run: compile for sm_90 the way run() would, launch nothing."""
    name = self.fn.__name__
    kwargs["debug"] = kwargs.get("debug", self.debug) or _jit.knobs.runtime.debug
    kwargs["instrumentation_mode"] = _jit.knobs.compilation.instrumentation_mode
    record = {"kernel": name, "mvl": kwargs.get("MVL"), "signature": None, "constexprs": None,
              "ok": False, "error": None}
    _records.append(record)
    try:
        bound_args, specialization, options = _binder(self)(*args, **kwargs)
        options, signature, constexprs, attrs = self._pack_args(
            BACKEND, kwargs, bound_args, specialization, options)
        record["signature"] = {k: str(v) for k, v in signature.items()}
        record["constexprs"] = {str(k): repr(v) for k, v in constexprs.items()}
        if callable(grid):  # the launch would evaluate the grid with the bound arguments
            grid = grid(bound_args)
        record["grid"] = list(grid)
        # The function's cache key too: two loads of one module may differ in their globals.
        key = (name, self.cache_key, repr(sorted(signature.items())), repr(sorted(constexprs.items())),
               repr(sorted(attrs.items())), repr(sorted(options.__dict__.items())))
        if key not in _compiled:
            try:
                source = GluonASTSource if isinstance(self, GluonJITFunction) else ASTSource
                src = source(self, signature, constexprs, attrs)
                triton.compile(src, target=TARGET, options=options.__dict__)
                _compiled[key] = None
            except Exception as exc:  # noqa: BLE001 - any compile failure is the finding
                _compiled[key] = _short_error(exc)
        record["error"] = _compiled[key]
        record["ok"] = _compiled[key] is None
    except Exception as exc:  # noqa: BLE001 - binding the arguments failed
        record["error"] = "binding the launch arguments failed: " + _short_error(exc)
    return None


def tuning_tune(self, key, written, launch):
    """Stands in for `_AppycTuning.tune`: launches (compiles) every candidate configuration
    once, as the timing runs on a GPU would, and goes on with the default. Nothing is kept in
    `chosen`: each case compiles every candidate for its own arguments' specialisation."""
    if self.candidates:
        _candidates[self.kernel] = sorted({c[0] for c in self.candidates})
    for config in self.candidates or (self.default,):
        launch(config)
    return self.default


def persistent_launch(kernel, phases, work, args, mvl, num_warps, warps_per_sm, constants=None,
                      state=None, kinds="", stop=None):
    """Stands in for `_appyc_persistent`: the launch a GPU would make, one cooperative launch
    with grid barriers or the first of the launches per phase (the occupancy query needs a GPU;
    the grid size does not change the code). A loop's registers come back as they went in."""
    sync = torch.zeros(1, dtype=torch.int64)
    tail = (sync,) if state is None else (sync, *state, torch.empty(len(state), dtype=torch.float64))
    if warps_per_sm:
        kernel[(1,)](*args, 0, phases, *tail, MVL=mvl, GRID_SYNC=True, **(constants or {}),
                     num_warps=num_warps, launch_cooperative_grid=True)
    else:
        kernel[(1,)](*args, 0, 1, *tail, MVL=mvl, GRID_SYNC=False, **(constants or {}),
                     num_warps=num_warps)
    return None if state is None else list(state)


def blocked_launch(twin, kernel, steps, arrays, scalars, reach, state=None, kinds=""):
    """Stands in for `_appyc_blocked`: the Gluon kernel compiled as a GPU launches it (one
    cooperative launch with grid barriers) at both widths and groups the GPU may pick, then
    None, so that the plain persistent kernel is compiled too (the twin runs only under the
    interpreter)."""
    tail = () if state is None else (*state, torch.empty(max(len(state), 1), dtype=torch.float64))
    for width, group in ((512, 32), (2048, 64)):
        while group > 1 and 4 * reach * group > width:
            group //= 2
        halo = reach * group
        scratch = [torch.empty(width, dtype=a.dtype) for a in arrays]
        sync = torch.zeros(1, dtype=torch.int64)
        kernel[(1,)](*arrays, *scratch, *scalars, arrays[0].shape[0], steps, width - 2 * halo, 1,
                     0, 1, sync, *tail, G=group, W=width, HALO=halo, COMPUTE=True, WRITE=True,
                     GRID_SYNC=True, num_warps=4, launch_cooperative_grid=True)
    return None


def blocked_2d_launch(module):
    """Stands in for `_appyc_blocked_2d`: the launcher's own GPU path, at every size (the
    module's L2 threshold lowered to 0 so that the cases' small arrays reach it), so the Gluon
    kernel is compiled with the tile, group and options a GPU launch would use (each launch
    compiles, launches nothing), then None, so that the plain persistent kernel is compiled
    too."""
    original = module._appyc_blocked_2d
    module._APPYC_BLOCKED_2D_MIN_BYTES = 0

    def launch(*args, **kwargs):
        original(*args, **kwargs)
        return None
    return launch


def blocked_3d_launch(module):
    """Stands in for `_appyc_blocked_3d`: the Gluon kernel compiled as the launcher's GPU path
    launches it (its tile, warps, register cap, one cooperative launch with grid barriers),
    without the occupancy query, at every size; then None, so that the plain persistent
    kernel is compiled too."""
    def launch(kernel, twin, steps, state, other, scalars, reach, guard):
        if state.dim() != 3 or other.shape != state.shape or other.dtype != state.dtype:
            return None  # the launcher's own fallbacks
        ty, tx = module._APPYC_BLOCKED_3D_TILE
        planes, rows, cols = state.shape
        sync = torch.zeros(1, dtype=torch.int64)
        kernel[(1,)](state, torch.empty_like(state), other, *scalars, planes, rows, cols, 1,
                     steps, 0, steps, sync, TY=ty, TX=tx, GR=guard, HALO=reach, GRID_SYNC=True,
                     num_warps=module._APPYC_BLOCKED_3D_WARPS,
                     maxnreg=module._APPYC_BLOCKED_3D_MAXNREG[0], launch_cooperative_grid=True)
        return None
    return launch


def _cpu_device(original):
    """`_appyc_device` falls back to cuda when a function has no array argument; stay on the CPU."""
    def device(*arrays):
        d = original(*arrays)
        return torch.device("cpu") if d.type == "cuda" else d
    return device


def main(request_path, result_path):
    global _records, _candidates
    request = json.loads(Path(request_path).read_text())
    _jit.JITFunction.run = compiling_run
    by_id = {c.id: c for c in CASES}
    modules = {}
    results = {}
    for case_id in request["cases"]:
        case = by_id[case_id]
        _records, _candidates = [], {}
        host_error = None
        try:
            if case.sample not in modules:
                mod = load_generated(Path(request["modules"][case.sample]),
                                     f"appyc_gpu_{case.sample}")
                if hasattr(mod, "_appyc_device"):
                    mod._appyc_device = _cpu_device(mod._appyc_device)
                if hasattr(mod, "_AppycTuning"):
                    mod._AppycTuning.tune = tuning_tune
                if hasattr(mod, "_appyc_persistent"):
                    mod._appyc_persistent = persistent_launch
                if hasattr(mod, "_appyc_blocked"):
                    mod._appyc_blocked = blocked_launch
                if hasattr(mod, "_appyc_blocked_2d"):
                    mod._appyc_blocked_2d = blocked_2d_launch(mod)
                if hasattr(mod, "_appyc_blocked_3d"):
                    mod._appyc_blocked_3d = blocked_3d_launch(mod)
                modules[case.sample] = mod
            size = case.sizes[0]
            args = case.make(np.random.default_rng(seed_for(case, size)), size)
            t_args, _ = materialize(args, "torch")
            with without_appy():
                getattr(modules[case.sample], case.func)(*t_args)
        except Exception:  # noqa: BLE001 - reported by the test
            host_error = traceback.format_exc(limit=8)
        results[case_id] = {"host_error": host_error, "compiles": _records,
                            "candidates": _candidates}
    Path(result_path).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
