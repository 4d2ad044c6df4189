"""Replayed launchers (`_appyc_replayed`), run on the CPU with a stand-in JIT function: a call
whose arguments match an earlier call's in dtype, device, shape, strides, alignment and scalar
values launches what that call launched, with this call's tensors, without running the
launcher's Python; anything else, and every call that could not be recorded faithfully, runs
the launcher as written. The last test replays real kernels (Triton's interpreter behind a
stand-in compiled kernel) on new inputs against the NumPy run of the unchanged source.
"""
import importlib.util
import threading

import numpy as np
import pytest
import torch
from triton import knobs

from test_launch_fast_path import Kernel, load_on_cpu
from test_samples import SAMPLES


@pytest.fixture
def module(tmp_path, monkeypatch):
    mod = load_on_cpu("vector_add", tmp_path, monkeypatch)
    monkeypatch.setattr(mod, "_APPYC_INTERPRET", False)  # the interpreter never replays
    # A settled configuration: a replay never stands in for a call that tunes.
    table = mod._vector_add_kernel0_tuning
    for dtype in (torch.float32, torch.float64):
        for size in (64, 128):
            table.chosen[(size, dtype, dtype, dtype)] = (128, 4)
    kernel = Kernel(list(mod._vector_add_kernel0.arg_names))
    monkeypatch.setattr(mod, "_vector_add_kernel0", kernel)
    mod.kernel = kernel
    return mod


def run_launcher(mod, monkeypatch):
    """Counts the calls that reach `_appyc_launch`, that is, that run the launcher's Python."""
    counted = []
    real = mod._appyc_launch

    def counting(*args, **kwargs):
        counted.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(mod, "_appyc_launch", counting)
    return counted


def arrays(n=64, dtype=torch.float32):
    return [torch.rand(n, dtype=dtype) for _ in range(3)]


def test_a_matching_call_replays_with_its_own_tensors(module, monkeypatch):
    counted = run_launcher(module, monkeypatch)
    module.vector_add(*arrays(), 60)
    assert len(counted) == 1
    A, B, C = arrays()
    module.vector_add(A, B, C, 60)
    assert len(counted) == 1  # replayed: the launcher's Python did not run
    fast = module.kernel.log[-1]
    assert fast[0] == "fast" and fast[1:5] == (1, 1, 1, 1234)
    # This call's tensors, in the kernel's order (C, A, B), then n, strides, MVL.
    launched = fast[10:]
    assert launched[0] is C and launched[1] is A and launched[2] is B
    assert launched[3:] == (60, 1, 1, 1, 128)


@pytest.mark.parametrize("change", ["size", "dtype", "strides", "misaligned", "scalar_type"])
def test_a_call_that_differs_in_what_the_launcher_reads_runs_it(module, monkeypatch, change):
    counted = run_launcher(module, monkeypatch)
    A, B, C = arrays(64)
    module.vector_add(A, B, C, 60)
    wide = arrays(128)  # views of the same shape (64,) as A, B and C
    if change == "size":
        module.vector_add(A, B, C, 61)
    elif change == "dtype":
        module.vector_add(*arrays(64, torch.float64), 60)
    elif change == "strides":
        module.vector_add(*[w[::2] for w in wide], 60)
    elif change == "misaligned":
        module.vector_add(*[w[1:65] for w in wide], 60)
    else:
        module.vector_add(A, B, C, 60.0)
    assert len(counted) == 2


def test_no_replay_while_a_launch_hook_is_installed(module, monkeypatch):
    counted = run_launcher(module, monkeypatch)
    A, B, C = arrays()
    module.vector_add(A, B, C, 60)
    hook = lambda metadata: None  # noqa: E731
    knobs.runtime.launch_enter_hook.add(hook)
    try:
        module.vector_add(A, B, C, 60)
    finally:
        knobs.runtime.launch_enter_hook.remove(hook)
    assert len(counted) == 2


def test_a_launch_without_a_compiled_kernel_is_never_replayed(module, monkeypatch):
    # Triton's interpreter returns no compiled kernel.
    module.kernel.returns = None
    counted = run_launcher(module, monkeypatch)
    for _ in range(3):
        module.vector_add(*arrays(), 60)
    assert len(counted) == 3


def test_a_call_that_tunes_is_not_recorded(module, monkeypatch):
    counted = run_launcher(module, monkeypatch)
    table = module._vector_add_kernel0_tuning
    table.chosen.clear()
    settle = iter([False, True])

    def tune(key, written, launch):
        if _RECORDING.launches is not None:
            _RECORDING.launches.append(None)  # as the real table's tune does
        config = (128, 4)
        if next(settle):
            table.chosen[key] = config
        return config

    _RECORDING = module._APPYC_RECORDING
    monkeypatch.setattr(table, "tune", tune)
    A, B, C = arrays()
    module.vector_add(A, B, C, 60)  # tunes, not settled
    module.vector_add(A, B, C, 60)  # tunes and settles
    module.vector_add(A, B, C, 60)  # takes the settled choice: recorded
    module.vector_add(A, B, C, 60)  # replayed
    assert len(counted) == 3


def test_the_real_tuning_table_spoils_the_recording(module):
    recording = module._APPYC_RECORDING
    recording.launches = []
    try:
        module._vector_add_kernel0_tuning.tune((64,), (), lambda config: None)
    except Exception:  # noqa: BLE001 - the stand-in torch cannot time; the mark comes first
        pass
    finally:
        launches, recording.launches = recording.launches, None
    assert launches == [None]


def test_one_tensor_passed_as_two_arguments_is_not_recorded(module, monkeypatch):
    counted = run_launcher(module, monkeypatch)
    A, B, _ = arrays()
    module.vector_add(A, B, A, 60)
    module.vector_add(A, B, A, 60)
    assert len(counted) == 2


def test_the_recording_is_per_thread(module):
    recording = module._APPYC_RECORDING
    recording.launches = []
    seen = []
    try:
        worker = threading.Thread(target=lambda: seen.append(recording.launches))
        worker.start()
        worker.join()
    finally:
        recording.launches = None
    assert seen == [None]


@pytest.fixture
def columns(tmp_path, monkeypatch):
    """column_reductions' col_sums: its launch takes the module's split-row scratch."""
    mod = load_on_cpu("column_reductions", tmp_path, monkeypatch)
    monkeypatch.setattr(mod, "_APPYC_INTERPRET", False)
    mod._col_sums_kernel0_tuning.chosen[(64, 64, torch.float32, torch.float32)] = (32, 4)
    kernel = Kernel(list(mod._col_sums_kernel0.arg_names))
    monkeypatch.setattr(mod, "_col_sums_kernel0", kernel)
    mod.kernel = kernel
    return mod


def test_the_module_s_scratch_buffers_are_held_and_reused(columns, monkeypatch):
    counted = run_launcher(columns, monkeypatch)
    columns.col_sums(torch.rand(64, 64), torch.zeros(64), 64, 64)
    A, out = torch.rand(64, 64), torch.zeros(64)
    columns.col_sums(A, out, 64, 64)
    assert len(counted) == 1
    partials, arrivals = columns._appyc_split_buffers(A.device, 1, 1)
    launched = columns.kernel.log[-1][10:]
    assert launched[0] is A and launched[1] is out
    assert any(a is partials for a in launched) and any(a is arrivals for a in launched)


def test_a_launch_of_a_tensor_made_during_the_call_is_not_recorded(columns, monkeypatch):
    kernel = Kernel(["x", "MVL"])
    made = []

    def launcher(x):
        copy = x.clone()  # stale on a replay: the next call's x has other values
        made.append(copy)
        columns._appyc_launch(kernel, (1,), (copy,), {"MVL": 16})

    replayed = columns._appyc_replayed(launcher)
    x = torch.rand(8)
    replayed(x)
    replayed(x)
    assert len(made) == 2


def test_the_interpreter_never_replays(module, monkeypatch):
    monkeypatch.setattr(module, "_APPYC_INTERPRET", True)
    counted = run_launcher(module, monkeypatch)
    A, B, C = arrays()
    for _ in range(3):
        module.vector_add(A, B, C, 60)
    assert len(counted) == 3


def test_a_launcher_that_keeps_missing_stops_recording(module, monkeypatch):
    # A host loop passing its loop variable: every call's key is new.
    counted = run_launcher(module, monkeypatch)
    A, B, C = arrays(128)
    for n in range(33, 71):  # 38 calls, each a miss
        module.vector_add(A, B, C, n)
    module.vector_add(A, B, C, 70)
    assert len(counted) == 39  # the last call matched the one before, but nothing was looked up


def test_a_hit_resets_the_count_of_misses(module, monkeypatch):
    counted = run_launcher(module, monkeypatch)
    A, B, C = arrays(128)
    for n in range(33, 63):  # 30 misses
        module.vector_add(A, B, C, n)
    module.vector_add(A, B, C, 62)  # a hit
    for n in range(63, 93):  # 30 more misses: 30 in a row, not 60
        module.vector_add(A, B, C, n)
    module.vector_add(A, B, C, 92)
    assert len(counted) == 60


def test_a_tensor_argument_read_on_the_host_is_not_recorded(columns, monkeypatch):
    # A 0-d tensor passed where the kernel takes a number: the launcher reads its value, which
    # the key (dtype, shape, strides) does not hold.
    kernel = Kernel(["x", "s", "MVL"])

    def launcher(x, s):
        columns._appyc_launch(kernel, (1,), (x, float(s)), {"MVL": 16})

    replayed = columns._appyc_replayed(launcher)
    x = torch.rand(8)
    replayed(x, torch.tensor(1.0))
    replayed(x, torch.tensor(2.0))
    assert kernel.log[-1][-2] == 2.0


def test_no_cuda_query_before_a_compiled_kernel_launched(module, monkeypatch):
    # The sm_90 compile check imports modules on a machine without a GPU: Triton's backends
    # compile, nothing launches, and asking CUDA for its device would raise.
    def no_gpu():
        raise RuntimeError("Found no NVIDIA driver")

    monkeypatch.setattr(module.torch.cuda, "current_device", no_gpu)
    module.kernel.returns = None
    counted = run_launcher(module, monkeypatch)
    for _ in range(3):
        module.vector_add(*arrays(), 60)
    assert len(counted) == 3


class Interpreted:
    """Stands in for a compiled kernel around the real JIT function under Triton's interpreter:
    `kernel[grid](...)` runs it and returns an object whose `run` (the compiled launcher's
    calling convention) runs it again, so a replay computes for real on the CPU."""

    def __init__(self, jit):
        self.jit = jit
        self.arg_names = jit.arg_names
        self.replays = 0

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.positional = len(args)  # the constexprs follow, by name, in the kernel's order
            self.jit[grid](*args, **kwargs)
            return self

        return launch

    function = packed_metadata = "interpreted"

    def run(self, g0, g1, g2, stream, function, metadata, h1, h2, h3, *args):
        self.replays += 1
        positional, constexprs = args[:self.positional], self.arg_names[self.positional:]
        self.jit[(g0, g1, g2)](*positional, **dict(zip(constexprs, args[self.positional:])))


@pytest.mark.parametrize("sample, function, kernel", [
    ("vector_add", "vector_add", "_vector_add_kernel0"),
    ("column_reductions", "col_sums", "_col_sums_kernel0"),  # holds the split-row scratch
])
def test_a_replay_on_new_inputs_computes_what_numpy_computes(tmp_path, monkeypatch, sample,
                                                             function, kernel):
    mod = load_on_cpu(sample, tmp_path, monkeypatch)
    monkeypatch.setattr(mod, "_APPYC_INTERPRET", False)  # replay, while kernels interpret
    stand_in = Interpreted(getattr(mod, kernel))
    monkeypatch.setattr(mod, kernel, stand_in)
    table = getattr(mod, f"{kernel}_tuning")
    rng = np.random.default_rng(7)
    if sample == "vector_add":
        n = 300
        table.chosen[(512, torch.float64, torch.float64, torch.float64)] = (128, 4)

        def inputs():
            return [rng.random(n), rng.random(n), np.zeros(n), n]
        out = 2
    else:
        m, n = 70, 45
        table.chosen[(64, 128, torch.float64, torch.float64)] = (32, 4)

        def inputs():
            return [rng.random((m, n)), np.zeros(n), m, n]
        out = 1
    # The unchanged source, run on NumPy arrays: the reference semantics.
    spec = importlib.util.spec_from_file_location(f"numpy_{sample}", SAMPLES / f"{sample}.py")
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    for call in range(3):  # records on the first call, replays on the next two
        args = inputs()
        expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        getattr(reference, function)(*expected)
        device = [torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
        getattr(mod, function)(*device)
        np.testing.assert_allclose(device[out].numpy(), expected[out], rtol=1e-12)
    assert stand_in.replays == 2
