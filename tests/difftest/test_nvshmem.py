"""Multi-GPU samples without a GPU: the generated modules run under Triton's interpreter on a CPU
stand-in for NVSHMEM (nvshmem_standin.py: one process per PE, symmetric heaps in shared files),
for 2 and 4 PEs, against the reference module's run of the unchanged source (appyc_aot.nvshmem)
and a global single-array NumPy run. A deadlock fails on every PE it stops within the bound of
the generated module's waits (or, with those compiled out, the stand-in's); nothing hangs."""
import importlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from nvshmem_cases import CASES
from test_samples import compile_sample, appyc_bin

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT / "samples") not in sys.path:
    sys.path.insert(0, str(ROOT / "samples"))


try:
    # The installed wheel (scripts/test.sh installs it), which the samples import too.
    from appyc_aot import nvshmem
except ImportError:
    # A plain checkout: python/ goes last on the path, so it never shadows an installed wheel
    # (test_python_api checks that the installed one is what Python finds).
    sys.path.append(str(ROOT / "python"))
    from appyc_aot import nvshmem

# Generous: under the interpreter on a loaded 2-core machine a PE can take a minute to reach
# its first put; a real deadlock still fails within this bound.
WAIT_TIMEOUT = float(os.environ.get("APPYC_NVSHMEM_TIMEOUT", "180"))


class PEFailure(AssertionError):
    def __init__(self, message, outputs=()):
        super().__init__(message)
        self.outputs = outputs  # every PE's output, None for a PE that did not finish


def run_pes(module: Path, function: str, case: str, n_pes: int, timeout=WAIT_TIMEOUT, options=(),
            env=None):
    """Runs the generated `function` on `n_pes` stand-in PEs; returns each PE's arrays. Waits
    give up after `timeout` seconds, the module's (APPYC_NVSHMEM_TIMEOUT) and the stand-in's.
    `env`: more environment variables for the PEs (nvshmem_standin.py's APPYC_STANDIN_SLOW)."""
    sys.path.insert(0, str(HERE))
    from nvshmem_standin import create_heaps

    with tempfile.TemporaryDirectory(prefix="appyc-nvshmem-") as d:
        create_heaps(d, n_pes)
        env = dict(os.environ, TRITON_INTERPRET="1", APPYC_NVSHMEM_TIMEOUT=str(timeout), **(env or {}))
        procs = [subprocess.Popen(
            [sys.executable, str(HERE / "nvshmem_standin.py"), str(module), function, case, str(pe),
             str(n_pes), d, str(timeout), *options],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env) for pe in range(n_pes)]
        deadline = time.monotonic() + timeout * 2 + 60
        outputs = [None] * n_pes
        try:
            for pe, p in enumerate(procs):
                left = max(1.0, deadline - time.monotonic())
                try:
                    outputs[pe] = p.communicate(timeout=left)[0].decode(errors="replace")
                except subprocess.TimeoutExpired:
                    raise PEFailure(f"PE {pe} did not finish within {timeout * 2 + 60:g} s (deadlock?)",
                                    outputs)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        failed = [(pe, p.returncode) for pe, p in enumerate(procs) if p.returncode != 0]
        if failed:
            # The root cause first: a PE that failed otherwise than by waiting for the others.
            waited = ("StandInDeadlock", "_AppycNvshmemTimeout")
            failed.sort(key=lambda f: any(w in outputs[f[0]] for w in waited))
            pe, rc = failed[0]
            tail = "\n".join(outputs[pe].strip().splitlines()[-12:])
            raise PEFailure(f"PE {pe} exited with {rc}:\n{tail}", outputs)
        return [dict(np.load(Path(d) / f"out{pe}.npz")) for pe in range(n_pes)]


@pytest.mark.parametrize("n_pes", [2, 4])
@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_module_matches_reference_on_stand_in(name, n_pes, tmp_path_factory):
    case = CASES[name]
    out_dir = tmp_path_factory.getbasetemp() / "nvshmem_gen"
    out_dir.mkdir(exist_ok=True)
    module = compile_sample(case.module, out_dir)
    try:
        per_pe = run_pes(module, case.function, name, n_pes)
    except PEFailure as e:
        pytest.fail(str(e), pytrace=False)
    got = case.gather([(pe["a0"],) for pe in per_pe])
    fn = getattr(importlib.import_module(case.module), case.function)
    ref = case.gather(nvshmem.run(fn, n_pes, case.make_args, timeout=30))
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got, case.expected(n_pes), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("n_pes", [1, 3])
def test_host_scalars_of_the_loop_are_registers_read_back_on_every_pe(n_pes, tmp_path_factory):
    """samples/nvshmem_host_scalars.py: `k = t + 1` gives each step's signal value and `sweeps`
    counts the sweeps; the function returns it. On every PE the grid is the reference's and the
    count is the sequential program's, 2 a step."""
    case = CASES["host_scalars"]
    out_dir = tmp_path_factory.getbasetemp() / "nvshmem_gen"
    out_dir.mkdir(exist_ok=True)
    module = compile_sample(case.module, out_dir)
    try:
        per_pe = run_pes(module, case.function, "host_scalars", n_pes)
    except PEFailure as e:
        pytest.fail(str(e), pytrace=False)
    np.testing.assert_allclose(case.gather([(pe["a0"],) for pe in per_pe]), case.expected(n_pes),
                               rtol=1e-10, atol=1e-10)
    assert [int(pe["returned"]) for pe in per_pe] == [2 * case.T] * n_pes


@pytest.mark.parametrize("p2p", ["1", "0"])
def test_puts_are_loads_and_stores_when_every_pe_is_reachable(p2p, tmp_path_factory):
    """P2P (the launch's choice when every PE is on this node; APPYC_NVSHMEM_P2P decides here):
    the kernel copies into the peer's heap through nvshmem_ptr and signals with its own add, and
    calls none of NVSHMEM's puts; without it, only NVSHMEM's. Both give the reference result."""
    case = CASES["jacobi2d_l8"]
    out_dir = tmp_path_factory.getbasetemp() / "nvshmem_gen"
    out_dir.mkdir(exist_ok=True)
    module = compile_sample(case.module, out_dir)
    try:
        per_pe = run_pes(module, case.function, "jacobi2d_l8", 2, env={"APPYC_NVSHMEM_P2P": p2p})
    except PEFailure as e:
        pytest.fail(str(e), pytrace=False)
    np.testing.assert_allclose(case.gather([(pe["a0"],) for pe in per_pe]), case.expected(2), rtol=1e-10, atol=1e-10)
    for pe in per_pe:
        # Listing 8: 4 puts an iteration, each one signal.
        puts = 4 * case.T
        calls = {k[len("calls_"):]: int(v) for k, v in pe.items() if k.startswith("calls_")}
        if p2p == "1":
            assert calls == {"ptr": 2 * puts, "signal_p2p": puts}, calls
        else:
            assert calls == {"putmem": puts}, calls


DEADLOCK = HERE / "nvshmem_deadlock.py"


@pytest.fixture(scope="module")
def deadlock_module(tmp_path_factory):
    out = tmp_path_factory.mktemp("nvshmem_deadlock") / "nvshmem_deadlock_gen.py"
    subprocess.run([str(appyc_bin()), str(DEADLOCK), "-o", str(out)], check=True, timeout=120)
    return out


def test_a_deadlock_fails_on_every_pe_with_the_record_of_its_wait(deadlock_module):
    # Every PE waits for one signal more than its peer sends: on 2 PEs each stops at t = 1.
    lines = DEADLOCK.read_text().splitlines()
    line = next(i for i, l in enumerate(lines, 1) if "SignalWait(flags[0], t + 1)" in l)
    start = time.monotonic()
    with pytest.raises(PEFailure) as e:
        run_pes(deadlock_module, "overwait", "jacobi2d_l8", 2, timeout=3)
    assert time.monotonic() - start < 60
    for pe, out in enumerate(e.value.outputs):
        assert out is not None, f"PE {pe} did not finish"
        error = next((l for l in out.splitlines() if "._AppycNvshmemTimeout: " in l), out)
        assert error.split("._AppycNvshmemTimeout: ")[-1] == (
            f"PE {pe}: tests/difftest/nvshmem_deadlock.py:{line}: "
            "nvshmem.SignalWait(flags[0], t + 1): gave up after 3 s (APPYC_NVSHMEM_TIMEOUT) at t = 1; "
            "flag element 0 is 1, the wait needs >= 2: a peer sent fewer signals than this PE waits "
            "for, or stopped (deadlock)"), out


def test_with_the_bounds_compiled_out_the_stand_in_reports_the_deadlock(deadlock_module):
    start = time.monotonic()
    with pytest.raises(PEFailure, match=r"StandInDeadlock\('PE \d: signal_wait_until\(.*\) waited 2 s"):
        run_pes(deadlock_module, "unsent", "jacobi2d_l8", 2, timeout=2, options=["--unbounded"])
    assert time.monotonic() - start < 60
