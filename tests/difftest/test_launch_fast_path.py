"""The generated launch path (`_appyc_launch`), run on the CPU with a stand-in JIT function: the
first launch of every specialization goes through `kernel[grid](...)` (Triton compiles and
caches), later launches that Triton would specialize alike go straight to the compiled kernel's
launcher with the same arguments, and anything Triton would specialize differently, a launch
hook, or a launch that returns no compiled kernel (the interpreter) goes through Triton again.
"""
import importlib.util
import types

import pytest
import torch
from triton import knobs

from test_samples import compile_sample


class Compiled:
    def __init__(self, log):
        self.function, self.packed_metadata = object(), object()
        self.run = lambda *a: log.append(("fast",) + a)


class Kernel:
    """Stands in for a JIT function with parameters `arg_names`; `kernel[grid](...)` records a
    launch through Triton and returns a compiled kernel (or `returns`)."""

    def __init__(self, arg_names, returns="compiled"):
        self.arg_names = arg_names
        self.log = []
        self.returns = returns

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.log.append(("triton", grid, args, kwargs))
            return Compiled(self.log) if self.returns == "compiled" else None
        return launch


def load_on_cpu(sample, tmp_path, monkeypatch):
    """samples/<sample>.py compiled and imported, its `torch` answering the launch path's CUDA
    queries on the CPU (device 0, stream 1234)."""
    path = compile_sample(sample, tmp_path)
    spec = importlib.util.spec_from_file_location(f"launch_{sample}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fake = types.SimpleNamespace(**{
        **vars(torch),
        "cuda": types.SimpleNamespace(current_device=lambda: 0),
        "_C": types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: 1234),
    })
    monkeypatch.setattr(mod, "torch", fake)
    return mod


@pytest.fixture
def launch(tmp_path, monkeypatch):
    return load_on_cpu("vector_add", tmp_path, monkeypatch)._appyc_launch


def paths(kernel):
    return [entry[0] for entry in kernel.log]


def test_a_repeated_launch_goes_straight_to_the_compiled_kernel(launch):
    k = Kernel(["x", "y", "n", "MVL"])
    x, y = torch.zeros(64), torch.zeros(64)
    launch(k, (3,), (x, y, 64), {"MVL": 128}, num_warps=4)
    assert k.log == [("triton", (3,), (x, y, 64), {"MVL": 128, "num_warps": 4})]
    launch(k, (3,), (x, y, 64), {"MVL": 128}, num_warps=4)
    fast = k.log[-1]
    assert fast[:4] == ("fast", 3, 1, 1) and fast[4] == 1234
    assert fast[-4:] == (x, y, 64, 128)  # the arguments, then the constants
    assert fast[7:10] == (None, None, None)  # no launch metadata, no hooks


@pytest.mark.parametrize("change", ["dtype", "misaligned", "one", "multiple_of_16", "wide_int",
                                    "constant", "num_warps", "float_type"])
def test_whatever_triton_specializes_on_goes_through_triton_again(launch, change):
    k = Kernel(["x", "n", "s", "MVL"])
    x = torch.zeros(64)
    base = dict(x=x, n=7, s=2.5, mvl=128, warps=4)
    changed = dict(base, **{
        "dtype": dict(x=torch.zeros(64, dtype=torch.float64)),
        "misaligned": dict(x=x[1:]),
        "one": dict(n=1),
        "multiple_of_16": dict(n=32),
        "wide_int": dict(n=2**40),
        "constant": dict(mvl=256),
        "num_warps": dict(warps=8),
        "float_type": dict(s=3),
    }[change])

    def go(a):
        launch(k, (1,), (a["x"], a["n"], a["s"]), {"MVL": a["mvl"]}, num_warps=a["warps"])

    go(base)
    go(base)
    go(changed)
    go(changed)
    assert paths(k) == ["triton", "fast", "triton", "fast"]
    # Values Triton does not specialize on (an int's other values, a float's value) do not count.
    go(dict(base, n=9, s=-1.0))
    assert paths(k)[-1] == "fast"


def test_a_launch_hook_sees_every_launch(launch):
    k = Kernel(["x", "MVL"])
    x = torch.zeros(8)
    launch(k, (1,), (x,), {"MVL": 16})
    hook = lambda metadata: None  # noqa: E731
    knobs.runtime.launch_enter_hook.add(hook)
    try:
        launch(k, (1,), (x,), {"MVL": 16})
    finally:
        knobs.runtime.launch_enter_hook.remove(hook)
    launch(k, (1,), (x,), {"MVL": 16})
    assert paths(k) == ["triton", "triton", "fast"]


def test_no_compiled_kernel_no_shortcut(launch):
    # Triton's interpreter (and the sm_90 compile check) return no compiled kernel.
    k = Kernel(["x", "MVL"], returns=None)
    x = torch.zeros(8)
    for _ in range(3):
        launch(k, (2,), (x,), {"MVL": 16})
    assert paths(k) == ["triton"] * 3


def test_constants_reach_the_launcher_in_the_kernel_s_order(launch):
    k = Kernel(["x", "lo", "MVL", "GRID_SYNC"])
    x = torch.zeros(8)
    for _ in range(2):
        launch(k, (4, 2), (x, 0), {"GRID_SYNC": True, "MVL": 32}, num_warps=8,
               launch_cooperative_grid=True)
    fast = k.log[-1]
    assert fast[1:4] == (4, 2, 1)
    assert fast[-4:] == (x, 0, 32, True)


def test_an_id_reused_by_another_kernel_does_not_match(launch):
    # A freed JIT function's id may be reused: the table names the function it belongs to.
    old, new = Kernel(["x", "MVL"]), Kernel(["x", "MVL"])
    x = torch.zeros(8)
    launch(old, (1,), (x,), {"MVL": 16})
    table = launch.__globals__["_APPYC_COMPILED"]
    table[id(new)] = table.pop(id(old))
    launch(new, (1,), (x,), {"MVL": 16})
    launch(new, (1,), (x,), {"MVL": 16})
    assert paths(new) == ["triton", "fast"]
