"""pytest setup for the differential tests.

TRITON_INTERPRET=1 must be in the environment before anything imports triton: the interpreter is
chosen when `triton.jit` decorates a function, so it is set here, at the top of the conftest.
"""
import os
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"

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


@pytest.fixture
def launch_counter(monkeypatch):
    """Wraps the interpreter's launch entry point.

    In Triton 3.6, `kernel[grid](...)` calls `KernelInterface.__getitem__`'s lambda, which calls
    `self.run(grid=..., warmup=False, ...)`; under TRITON_INTERPRET=1 `self` is an
    `InterpretedFunction` (an `Autotuner` / `Heuristics` wrapper also ends in its `run`). A call
    with warmup=True does not execute, so it is not counted.
    """
    from triton.runtime.interpreter import InterpretedFunction

    counter = LaunchCounter()
    original = InterpretedFunction.run

    def counting_run(self, *args, grid, warmup, **kwargs):
        if not warmup:
            counter.count += 1
            counter.kernels.append(getattr(self.fn, "__name__", "?"))
        return original(self, *args, grid=grid, warmup=warmup, **kwargs)

    monkeypatch.setattr(InterpretedFunction, "run", counting_run)
    return counter
