"""The generated NVSHMEM host runtime's GPU path, run on the CPU with its device calls stubbed:
the CPU stand-in (test_nvshmem.py) replaces `_appyc_nvshmem_persistent`, so this is where its
own logic is checked. Every compiled specialisation of a kernel must get NVSHMEM's module init
before its first launch (a second shape once launched a module without it and faulted), once.
"""
import importlib.util
import types

import torch

from test_samples import compile_sample


class FakeKernel:
    """Stands in for a @triton.jit kernel: `warmup` returns one compiled object per
    specialisation (here: per value of the first integer argument), launches are recorded."""

    def __init__(self):
        self.compiled = {}
        self.launches = []
        self.fn = types.SimpleNamespace(__name__="fake")

    def warmup(self, *args, grid, **options):
        key = next(a for a in args if isinstance(a, int))
        if key not in self.compiled:
            self.compiled[key] = types.SimpleNamespace(module=f"module{key}", inits=0,
                                                       _init_handles=lambda: None)
        return self.compiled[key]

    def __getitem__(self, grid):
        def launch(*args, **options):
            self.launches.append((grid, options.get("maxnreg"), options["launch_cooperative_grid"]))
            self.options = options
        return launch


def test_every_new_specialisation_is_initialised_once(tmp_path, monkeypatch):
    path = compile_sample("nvshmem_jacobi2d_l8", tmp_path)
    spec = importlib.util.spec_from_file_location("nvshmem_runtime_l8", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # The GPU path, on the CPU: no interpreter, device queries and the device library stubbed.
    monkeypatch.setattr(mod, "_APPYC_INTERPRET", False)
    monkeypatch.setattr(mod, "_appyc_programs_per_sm", lambda compiled, warps, props: 2)
    monkeypatch.setattr(mod, "_appyc_nvshmem_lib", lambda: {})
    monkeypatch.setattr(mod, "_appyc_nvshmem_my_pe", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda device: types.SimpleNamespace(multi_processor_count=3))
    inits = []
    import torch._C._distributed_c10d as c10d
    monkeypatch.setattr(c10d, "_nvshmemx_cumodule_init", inits.append, raising=False)

    kernel = FakeKernel()
    flag = torch.zeros(2)
    for size in (5, 5, 16, 5, 16):  # two specialisations, each launched more than once
        mod._appyc_nvshmem_persistent(kernel, 4, None, (flag, size), 128, 4)
    assert inits == ["module5", "module16"]
    # Every launch is cooperative, under the register cap, on programs/SM x SMs programs.
    assert kernel.launches == [((6,), mod._APPYC_NVSHMEM_MAXNREG, True)] * 5
    # Work smaller than the resident grid launches only as many programs.
    mod._appyc_nvshmem_persistent(kernel, 4, 4, (flag, 5), 128, 4)
    assert kernel.launches[-1][0] == (4,)
    # More work than programs: the fewest programs that take it in as many rounds (7 tiles on 6
    # resident programs are two rounds, which 4 programs take too: fewer barrier arrivals).
    mod._appyc_nvshmem_persistent(kernel, 4, 7, (flag, 5), 128, 4)
    assert kernel.launches[-1][0] == (4,)
    mod._appyc_nvshmem_persistent(kernel, 4, 12, (flag, 5), 128, 4)
    assert kernel.launches[-1][0] == (6,)
    # The kernel's other constexprs (a strip loop's ONE_STRIP switch) reach the launch.
    mod._appyc_nvshmem_persistent(kernel, 4, None, (flag, 5), 128, 4, {"ONE_STRIP": True})
    assert kernel.options["ONE_STRIP"] is True and kernel.options["MVL"] == 128
    # A launch's own cap (a distributed loop's), and APPYC_NVSHMEM_MAXNREG over every cap (0: none).
    mod._appyc_nvshmem_persistent(kernel, 4, None, (flag, 5), 128, 4, maxnreg=72)
    assert kernel.launches[-1][1] == 72
    monkeypatch.setenv("APPYC_NVSHMEM_MAXNREG", "64")
    mod._appyc_nvshmem_persistent(kernel, 4, None, (flag, 5), 128, 4, maxnreg=72)
    assert kernel.launches[-1][1] == 64
    monkeypatch.setenv("APPYC_NVSHMEM_MAXNREG", "0")
    mod._appyc_nvshmem_persistent(kernel, 4, None, (flag, 5), 128, 4)
    assert kernel.launches[-1][1] is None



def test_loops_of_2d_sweeps_take_the_gpu_models_measured_configuration(tmp_path, monkeypatch):
    """On a model _APPYC_NVSHMEM_PLANE_DEFAULTS names (the H200 and the H100: MVL 1024, a cap
    of 128) a loop of 2-D sweeps launches with them; elsewhere with the compiled default and
    the runtime's cap; APPYC_MVL and APPYC_NVSHMEM_MAXNREG still decide over both."""
    path = compile_sample("nvshmem_jacobi2d_l8", tmp_path)
    spec = importlib.util.spec_from_file_location("nvshmem_runtime_planes", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(mod, "_APPYC_INTERPRET", False)
    monkeypatch.delenv("APPYC_MVL", raising=False)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H200")
    assert mod._appyc_nvshmem_plane_config(512, 4) == (1024, 4, 128)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H100 80GB HBM3")
    assert mod._appyc_nvshmem_plane_config(512, 4) == (1024, 4, 128)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA A100-SXM4-80GB")
    assert mod._appyc_nvshmem_plane_config(512, 4) == (512, 4, None)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H200")
    monkeypatch.setenv("APPYC_MVL", "256")
    assert mod._appyc_nvshmem_plane_config(512, 4) == (256, 4, 128)
    # The launcher hands the model's cap to the launch (where APPYC_NVSHMEM_MAXNREG still wins).
    launched = {}
    monkeypatch.setattr(mod, "_appyc_nvshmem_persistent",
                        lambda *args, maxnreg=None, **kw: launched.update(mvl=args[4], maxnreg=maxnreg))
    monkeypatch.setattr(mod, "_appyc_nvshmem_check_symmetric", lambda *arrays: None)
    A, B, flags = torch.zeros(6, 7), torch.zeros(6, 7), torch.zeros(4, dtype=torch.int64)
    mod._launch_jacobi_2d_persistent0(A, flags, 6, 7, 0, 0, B, 2)
    assert launched == {"mvl": 256, "maxnreg": 128}


# --- bounded waits -------------------------------------------------------------------------------
# The generated wait (templates/nvshmem.py.jinja: _appyc_nvshmem_until and its callers) runs under
# the interpreter as written, on one stand-in PE in this process, with its device primitives
# stubbed: `acquire` (the poll), `clock` (%globaltimer) and `any` (the program's barrier-OR).

import subprocess  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from nvshmem_cases import CASES  # noqa: E402
from nvshmem_standin import Runtime, _int64, _value, create_heaps  # noqa: E402
from test_samples import appyc_bin, load_module  # noqa: E402

DEADLOCK = Path(__file__).resolve().parent / "nvshmem_deadlock.py"


def _line(text, after):
    """The number of the first line of nvshmem_deadlock.py holding `text` after one holding `after`."""
    lines = DEADLOCK.read_text().splitlines()
    start = next(i for i, l in enumerate(lines) if after in l)
    return next(i for i, l in enumerate(lines) if i > start and text in l) + 1


class Clock:
    """A stubbed %globaltimer that advances `step` seconds at every read. It fails the test past
    `most` reads: a wait that never gives up would otherwise spin for ever."""

    def __init__(self, step=1.0, most=100):
        self.now, self.step, self.most, self.reads = 0, int(step * 1e9), most, 0

    def __call__(self):
        self.reads += 1
        if self.reads > self.most:
            raise AssertionError(f"the wait read the clock {self.reads} times without giving up")
        self.now += self.step
        return _int64(self.now)


class StubPE(Runtime):
    """PE 0 of 1 on the stand-in's heap with a stubbed clock; counts its polls. `late` polls
    return 0 first, then `signal` if given (a signal that arrives late); polls of an address in
    `stuck` always return 0 (a program that never arrives at a barrier)."""

    def __init__(self, directory, clock, late=0, signal=None):
        create_heaps(directory, 1)
        super().__init__(directory, 0, 1, timeout=30)
        self.clock, self.late, self.signal = clock, late, signal
        self.polls, self.stuck = 0, set()

    def acquire(self, addr, system_scope=True):
        self.polls += 1
        if self.polls <= self.late or _value(addr) in self.stuck:
            return _int64(0)
        return _int64(self.signal) if self.signal is not None else super().acquire(addr)


def _generated(src, tmp_path, name):
    out = tmp_path / f"{name}.py"
    subprocess.run([str(appyc_bin()), str(src), "-o", str(out)], check=True, timeout=120)
    return load_module(out, f"{name}_{tmp_path.name}")


def _prepare(mod, pe, case="jacobi2d_l8"):
    """What the stand-in's main does, in this process: the module on `pe`, and PE 0's arrays of
    `case` on its heap (with copies of their first values)."""
    mod._appyc_nvshmem_use(pe)
    args = [pe.symmetric(torch.from_numpy(np.ascontiguousarray(a))) if isinstance(a, np.ndarray) else a
            for a in CASES[case].make_args(0, 1)]
    return args, [a.clone() for a in args if isinstance(a, torch.Tensor)]


def test_a_wait_never_signalled_gives_up_with_its_record(tmp_path, monkeypatch):
    monkeypatch.setenv("APPYC_NVSHMEM_TIMEOUT", "5")
    monkeypatch.setenv("APPYC_MVL", "16")  # a row a program: the interpreter runs 3 programs
    mod = _generated(DEADLOCK, tmp_path, "deadlock")
    clock = Clock(step=1.0)
    pe = StubPE(tmp_path, clock)
    args, before = _prepare(mod, pe)
    with pytest.raises(mod._AppycNvshmemTimeout) as e:
        mod.unsent(*args)
    msg = str(e.value)
    line = _line("nvshmem.SignalWait(flags[1], t)", after="def unsent")
    for part in (f"PE 0: tests/difftest/nvshmem_deadlock.py:{line}: nvshmem.SignalWait(flags[1], t): ",
                 "gave up after 5 s (APPYC_NVSHMEM_TIMEOUT) at t = 1; ",
                 "flag element 1 is 0, the wait needs >= 1"):
        assert part in msg, msg
    # Program 0 read the clock when its first poll failed, then once every SPINS polls until
    # more than 5 s had passed (6 more reads); the interpreter's two other programs found the
    # abort word at their first check and left (2 reads each).
    spins = mod._APPYC_NVSHMEM_SPINS
    assert (clock.reads, pe.polls) == (7 + 2 * 2, 1 + 6 * spins + 2 * (1 + spins))
    # Nothing after the wait ran.
    assert torch.equal(args[1], before[1])


def test_a_wait_satisfied_at_its_first_poll_never_reads_the_clock(tmp_path, monkeypatch):
    monkeypatch.setenv("APPYC_NVSHMEM_TIMEOUT", "5")
    mod = load_module(compile_sample("nvshmem_jacobi2d_l8", tmp_path), f"l8_{tmp_path.name}")
    clock = Clock(most=0)  # any read fails the test
    pe = StubPE(tmp_path, clock)
    args, _ = _prepare(mod, pe)
    mod.jacobi_2d(*args)  # PE 0 of 1 is its own neighbour: every put lands before its wait
    case = CASES["jacobi2d_l8"]
    np.testing.assert_allclose(case.gather([(args[0].numpy(),)]), case.expected(1), rtol=1e-12, atol=1e-12)
    assert clock.reads == 0 and pe.polls > 0


@pytest.mark.parametrize("timeout", ["60", "1"])
def test_a_late_signal_is_waited_for_within_the_limit_only(tmp_path, monkeypatch, timeout):
    monkeypatch.setenv("APPYC_NVSHMEM_TIMEOUT", timeout)
    mod = _generated(DEADLOCK, tmp_path, "deadlock")
    # The signal arrives after 300 polls: 2 clock checks, 3 s of the stubbed clock.
    pe = StubPE(tmp_path, Clock(step=1.0), late=300, signal=1 << 40)
    args, _ = _prepare(mod, pe)
    if timeout == "1":
        with pytest.raises(mod._AppycNvshmemTimeout, match=r"gave up after 1 s \(APPYC_NVSHMEM_TIMEOUT\) at t = 1"):
            mod.unsent(*args)
    else:
        mod.unsent(*args)
        interior = (slice(1, -1), slice(1, -1))
        assert torch.equal(args[1][interior], args[0][interior])


def _one_launch(mod, launched):
    """_appyc_nvshmem_persistent's GPU form on the interpreter: one launch of every phase with
    its grid barriers on, by one program (the interpreter runs programs one after another), then
    the same check of the record. The device calls it makes on the GPU are left out."""

    def persistent(kernel, phases, work, args, mvl, num_warps, constants=None, sites=None, maxnreg=None):
        control = mod._appyc_nvshmem_control(torch.device("cpu"))
        launched.append(control)
        kernel[(1,)](*args, 0, phases, control, MVL=mvl, GRID_SYNC=True,
                     P2P=bool(mod._appyc_nvshmem_p2p()), **(constants or {}))
        mod._appyc_nvshmem_check(control, sites)

    return persistent


def test_a_grid_barrier_never_reached_gives_up_and_the_program_leaves(tmp_path, monkeypatch):
    monkeypatch.setenv("APPYC_NVSHMEM_TIMEOUT", "3")
    mod = load_module(compile_sample("nvshmem_jacobi2d_l8", tmp_path), f"l8b_{tmp_path.name}")
    pe = StubPE(tmp_path, Clock(step=1.0))
    args, before = _prepare(mod, pe)
    launched = []
    mod._appyc_nvshmem_persistent = _one_launch(mod, launched)
    # Polls of the launch's barrier counter never see the arrivals (a program that never comes).
    control = mod._appyc_nvshmem_control

    def stuck_control(device):
        c = control(device)
        pe.stuck.add(c.data_ptr())
        return c

    mod._appyc_nvshmem_control = stuck_control
    with pytest.raises(mod._AppycNvshmemTimeout) as e:
        mod.jacobi_2d(*args)
    msg = str(e.value)
    # The loop's first barrier follows its second wait (line 28), at t = 1.
    assert msg.startswith("PE 0: the grid barrier after samples/nvshmem_jacobi2d_l8.py:28 "
                          "(nvshmem.SignalWait(flags[1], t)): gave up after 3 s (APPYC_NVSHMEM_TIMEOUT) "
                          "at t = 1; its counter is 1 of the 1 arrivals it waits for"), msg
    # state, PE, flag (-1: a barrier), expected, observed, step, line
    assert launched[0][8:15].tolist() == [1, 0, -1, 1, 1, 1, 28]
    # The program left its phase loop: the sweep after the barrier never ran.
    assert torch.equal(args[1], before[1])


def test_the_limit_is_read_from_the_environment_at_each_launch(tmp_path, monkeypatch):
    mod = _generated(DEADLOCK, tmp_path, "deadlock")
    assert "APPYC_NVSHMEM_TIMEOUT" in Path(mod.__file__).read_text()  # the module names it
    mod._appyc_nvshmem_my_pe = lambda: 3
    monkeypatch.delenv("APPYC_NVSHMEM_TIMEOUT", raising=False)
    assert mod._appyc_nvshmem_control(torch.device("cpu")).tolist()[8:] == [0, 3, 0, 0, 0, 0, 0, 60 * 10**9]
    monkeypatch.setenv("APPYC_NVSHMEM_TIMEOUT", "0.25")
    assert mod._appyc_nvshmem_control(torch.device("cpu"))[15] == 250_000_000
    for never in ("0", "inf"):
        monkeypatch.setenv("APPYC_NVSHMEM_TIMEOUT", never)
        assert mod._appyc_nvshmem_control(torch.device("cpu"))[15] == mod._APPYC_NVSHMEM_NO_LIMIT
    monkeypatch.setenv("APPYC_NVSHMEM_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="APPYC_NVSHMEM_TIMEOUT='soon'"):
        mod._appyc_nvshmem_control(torch.device("cpu"))
