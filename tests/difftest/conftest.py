"""pytest setup for the differential tests.

TRITON_INTERPRET=1 must be in the environment before anything imports triton: the interpreter is
chosen when `triton.jit` decorates a function, so it is set here, at the top of the conftest.

APPYC_TEST_DEVICE=cuda runs the same tests on a GPU instead (no interpreter; tensors on cuda).
CI never does; it is for checking the generated code on real hardware by hand.
"""
import inspect
import os
import sys
from pathlib import Path

DEVICE = os.environ.get("APPYC_TEST_DEVICE", "cpu")
if DEVICE == "cpu":
    os.environ["TRITON_INTERPRET"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

HERE = Path(__file__).resolve().parent

# The NumPy reference run resolves `import appy` to the shim next to this file.
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def pytest_configure(config):
    # Triton's interpreter itself triggers NumPy deprecation warnings; they are not ours.
    config.addinivalue_line("filterwarnings", r"ignore::DeprecationWarning:triton\..*")


def pytest_addoption(parser):
    parser.addoption("--sample", action="append", default=[],
                     help="only run the cases of this sample (file stem or path); repeatable")


def pytest_collection_modifyitems(config, items):
    wanted = {Path(s).stem for s in config.getoption("--sample")}
    if not wanted:
        return
    keep, drop = [], []
    for item in items:
        sample = getattr(item, "callspec", None) and item.callspec.params.get("sample")
        case = getattr(item, "callspec", None) and item.callspec.params.get("case")
        name = sample or (case.sample if case is not None else None)
        (keep if name in wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


class LaunchCounter:
    """Counts kernel launches through the Triton interpreter."""

    def __init__(self):
        self.count = 0
        self.kernels = []
        self.float_args = []   # (kernel, parameter, value) of Python floats passed to kernels


def _as_gpu_scalar(value, annotation):
    """A Python float kernel argument as a GPU launch would see it.

    On a GPU, Triton 3.6 specialises an unannotated Python float argument as fp32; a parameter
    annotated as fp64 (`beta: "fp64"` or `tl.float64`) is passed as a double, and a float
    constexpr keeps its value (checked on an H100: 1.2 * an fp64 one gives 1.2000000476837158
    unannotated, exactly 1.2 with "fp64" or constexpr). The interpreter hands the Python float
    itself to the kernel, where it keeps fp64 precision whatever the annotation. Rounding it here
    makes the interpreter show the precision a GPU run would have, so a compiler that passes fp64
    scalars as plain floats fails the fp64 tests on the CPU as well.
    """
    if type(value) is float and annotation not in ("fp64", "constexpr"):
        return _TypedFloat(np.float32(value), "fp32")
    if type(value) is float and annotation == "fp64":
        return _TypedFloat(value, "fp64")
    return value


class _TypedFloat(float):
    """A float kernel argument with the type a GPU launch gives it.

    The interpreter passes a Python float to the kernel as a weak constant, which takes the type
    of whatever it meets (`x * i` with an int32 `i` is fp32, while the GPU computes fp64 for a
    parameter annotated fp64). `_interpreter_typed_floats` turns these into typed scalars.
    """

    def __new__(cls, value, ty):
        obj = super().__new__(cls, float(value))
        obj.ty = ty
        return obj


def _interpreter_typed_floats(monkeypatch):
    import triton.language as tl
    from triton.runtime import interpreter

    original = interpreter._implicit_cvt

    def implicit_cvt(arg):
        if isinstance(arg, _TypedFloat):
            ty = tl.float64 if arg.ty == "fp64" else tl.float32
            data = np.array([float(arg)], dtype=np.float64 if arg.ty == "fp64" else np.float32)
            return tl.tensor(interpreter.TensorHandle(data, ty), ty)
        return original(arg)

    monkeypatch.setattr(interpreter, "_implicit_cvt", implicit_cvt)


def _param_annotations(fn):
    """Normalised Triton type of each annotated parameter of a kernel ("fp64", "constexpr", ...)."""
    from triton.runtime.jit import _normalize_ty

    out = {}
    for name, param in inspect.signature(fn).parameters.items():
        if param.annotation is not inspect.Parameter.empty:
            try:
                out[name] = _normalize_ty(param.annotation)
            except Exception:  # an annotation Triton does not know: treat as none
                out[name] = str(param.annotation)
    return out


@pytest.fixture
def launch_counter(monkeypatch):
    """Wraps the interpreter's launch entry point.

    In Triton 3.6, `kernel[grid](...)` calls `KernelInterface.__getitem__`'s lambda, which calls
    `self.run(grid=..., warmup=False, ...)`; under TRITON_INTERPRET=1 `self` is an
    `InterpretedFunction` (an `Autotuner` / `Heuristics` wrapper also ends in its `run`). A call
    with warmup=True does not execute, so it is not counted.
    """
    if DEVICE == "cpu":
        from triton.runtime.interpreter import InterpretedFunction as Launched
    else:  # a real GPU: JITFunction.run compiles and launches (autotuner trials count too)
        from triton.runtime.jit import JITFunction as Launched

    counter = LaunchCounter()
    original = Launched.run
    if DEVICE == "cpu":
        _interpreter_typed_floats(monkeypatch)

    def counting_run(self, *args, grid, warmup, **kwargs):
        if warmup or DEVICE != "cpu":
            if not warmup:
                counter.count += 1
                counter.kernels.append(getattr(self.fn, "__name__", "?"))
            return original(self, *args, grid=grid, warmup=warmup, **kwargs)
        name = getattr(self.fn, "__name__", "?")
        counter.count += 1
        counter.kernels.append(name)
        params = list(inspect.signature(self.fn).parameters)
        ann = _param_annotations(self.fn)
        named = list(zip(params, args)) + list(kwargs.items())
        counter.float_args += [(name, p, v) for p, v in named
                               if type(v) is float and ann.get(p) not in ("fp64", "constexpr")]
        args = tuple(_as_gpu_scalar(a, ann.get(p)) for p, a in zip(params, args))
        kwargs = {k: _as_gpu_scalar(v, ann.get(k)) for k, v in kwargs.items()}
        return original(self, *args, grid=grid, warmup=warmup, **kwargs)

    monkeypatch.setattr(Launched, "run", counting_run)
    return counter
