"""The pure-Python `nvshmem` reference (python/appyc_aot/nvshmem.py) on the multi-PE samples:
N PEs of the unchanged source against one global NumPy run, and its error reports."""
import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT / "python", ROOT / "samples"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from appyc_aot import nvshmem  # noqa: E402
from nvshmem_cases import CASES  # noqa: E402


@pytest.mark.parametrize("n_pes", [1, 2, 3, 4])
@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_matches_global_numpy(name, n_pes):
    case = CASES[name]
    fn = getattr(importlib.import_module(case.module), case.function)
    out = nvshmem.run(fn, n_pes, case.make_args, timeout=20)
    np.testing.assert_allclose(case.gather(out), case.expected(n_pes), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,n_pes", [("jacobi2d_grid", 9), ("jacobi3d_grid", 27)])
def test_process_grids_with_three_pes_an_axis(name, n_pes):
    # With one or two PEs along an axis both neighbours are the same PE, so a swapped direction
    # passes; three an axis (3 x 3, 3 x 3 x 3) tells every neighbour apart.
    case = CASES[name]
    assert set(case.grid(n_pes)) == {3}
    fn = getattr(importlib.import_module(case.module), case.function)
    out = nvshmem.run(fn, n_pes, case.make_args, timeout=20)
    np.testing.assert_allclose(case.gather(out), case.expected(n_pes), rtol=1e-12, atol=1e-12)


def _never_signalled(A, flags):
    nvshmem.SignalWait(flags[0], 1)


def test_a_wait_nobody_signals_is_a_deadlock_error_not_a_hang():
    with pytest.raises(nvshmem.Deadlock, match=r"PE \d waits for flags\[0\] >= 1"):
        nvshmem.run(_never_signalled, 2, lambda pe, n: (np.zeros(3), np.zeros(2, np.int64)), timeout=0.5)


def _wrong_signal(A, flags):
    nvshmem.Putmem(A[0:2], A[2:4], (nvshmem.my_pe() + 1) % nvshmem.n_pes(), flags[0], 2)


def test_a_signal_that_is_not_the_put_count_is_reported():
    with pytest.raises(nvshmem.SignalMismatch, match="put number 1"):
        nvshmem.run(_wrong_signal, 2, lambda pe, n: (np.zeros(4), np.zeros(2, np.int64)), timeout=2)


def _bad_shape(A, flags):
    nvshmem.Putmem(A[0:3], A[2:4], 0)


def test_shape_mismatch_is_reported():
    with pytest.raises(nvshmem.NvshmemError, match="Putmem of"):
        nvshmem.run(_bad_shape, 1, lambda pe, n: (np.zeros(4), np.zeros(2, np.int64)), timeout=2)
