"""Multi-GPU samples without a GPU: the generated modules run under Triton's interpreter on a CPU
stand-in for NVSHMEM (nvshmem_standin.py: one process per PE, symmetric heaps in shared files),
for 2 and 4 PEs, against the reference module's run of the unchanged source (appyc_aot.nvshmem)
and a global single-array NumPy run. A deadlock fails within a timeout with the stand-in's
message; nothing hangs."""
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
    pass


def run_pes(module: Path, function: str, case: str, n_pes: int, timeout=WAIT_TIMEOUT, env=None):
    """Runs the generated `function` on `n_pes` stand-in PEs; returns each PE's arrays. `env`:
    more environment variables for the PEs (nvshmem_standin.py's APPYC_STANDIN_SLOW)."""
    sys.path.insert(0, str(HERE))
    from nvshmem_standin import create_heaps

    with tempfile.TemporaryDirectory(prefix="appyc-nvshmem-") as d:
        create_heaps(d, n_pes)
        env = dict(os.environ, TRITON_INTERPRET="1", **(env or {}))
        procs = [subprocess.Popen(
            [sys.executable, str(HERE / "nvshmem_standin.py"), str(module), function, case, str(pe),
             str(n_pes), d, str(timeout)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env) for pe in range(n_pes)]
        deadline = time.monotonic() + timeout * 2 + 60
        outputs = [None] * n_pes
        try:
            for pe, p in enumerate(procs):
                left = max(1.0, deadline - time.monotonic())
                try:
                    outputs[pe] = p.communicate(timeout=left)[0].decode(errors="replace")
                except subprocess.TimeoutExpired:
                    raise PEFailure(f"PE {pe} did not finish within {timeout * 2 + 60:g} s (deadlock?)")
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        failed = [(pe, p.returncode) for pe, p in enumerate(procs) if p.returncode != 0]
        if failed:
            # The root cause first: a PE that failed otherwise than by waiting for the others.
            failed.sort(key=lambda f: "StandInDeadlock" in outputs[f[0]])
            pe, rc = failed[0]
            tail = "\n".join(outputs[pe].strip().splitlines()[-12:])
            raise PEFailure(f"PE {pe} exited with {rc}:\n{tail}")
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


DEADLOCK = '''
import numpy as np
from appyc_aot import nvshmem


def jacobi_2d(A, B, M, N, T):
    flags = np.zeros(4, dtype=np.int64)
    for t in range(1, T + 1):
        # Waits for a put nobody makes.
        nvshmem.SignalWait(flags[0], t)
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        B[1:M-1, 1:N-1] = A[1:M-1, 1:N-1]
'''


def test_a_deadlock_fails_with_a_message_instead_of_hanging(tmp_path):
    src = tmp_path / "deadlock.py"
    src.write_text(DEADLOCK)
    out = tmp_path / "deadlock_gen.py"
    subprocess.run([str(appyc_bin()), str(src), "-o", str(out)], check=True)
    start = time.monotonic()
    with pytest.raises(PEFailure, match="deadlock"):
        run_pes(out, "jacobi_2d", "jacobi2d_l8", 2, timeout=2)
    assert time.monotonic() - start < 60
