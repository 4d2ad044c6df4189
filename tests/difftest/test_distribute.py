"""`#pragma distribute` without a GPU: the generated module runs under Triton's interpreter on the
CPU stand-in of NVSHMEM (nvshmem_standin.py, one process per PE) with 2, 3 and 4 PEs; every PE
passes the same global arrays and must get back exactly what the unchanged source computes with
NumPy in one process (and what the compiled module computes in one process, where the loop runs
as the single-GPU kernel). Row counts are odd and not divisible by the PE counts."""
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from nvshmem_cases import DIST_CASES
from test_nvshmem import PEFailure, run_pes
from test_samples import compile_sample, load_generated

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT / "samples") not in sys.path:
    sys.path.insert(0, str(ROOT / "samples"))


def generated(tmp_path_factory, module):
    out_dir = tmp_path_factory.getbasetemp() / "distribute_gen"
    out_dir.mkdir(exist_ok=True)
    return compile_sample(module, out_dir)


@pytest.mark.parametrize("n_pes", [2, 3, 4])
@pytest.mark.parametrize("name", sorted(DIST_CASES))
def test_every_pe_gets_the_sequential_result(name, n_pes, tmp_path_factory):
    case = DIST_CASES[name]
    module = generated(tmp_path_factory, case.module)
    try:
        per_pe = run_pes(module, case.function, name, n_pes)
    except PEFailure as e:
        pytest.fail(str(e), pytrace=False)
    expected = case.expected()
    if case.blocks:
        # Each PE got its own rows back: glued in PE order they are the global result.
        glued = {k: np.concatenate([arrays[k] for arrays in per_pe]) for k in per_pe[0] if k.startswith("a")}
        per_pe = [glued]
    for pe, arrays in enumerate(per_pe):
        for i, want in enumerate(expected):
            np.testing.assert_array_equal(arrays[f"a{i}"], want, err_msg=f"PE {pe} of {n_pes}, array {i}")


@pytest.mark.parametrize("n_pes", [2, 3])
def test_a_host_scalar_read_after_the_loop_is_returned_on_every_pe(n_pes, tmp_path_factory):
    """relax_counted counts its sweeps in a host scalar of the distributed loop and returns it."""
    case = DIST_CASES["distribute_host_scalars"]
    module = generated(tmp_path_factory, case.module)
    try:
        per_pe = run_pes(module, case.function, "distribute_host_scalars", n_pes)
    except PEFailure as e:
        pytest.fail(str(e), pytrace=False)
    assert [int(pe["returned"]) for pe in per_pe] == [2 * case.T] * n_pes


@pytest.mark.parametrize("name", sorted(n for n, c in DIST_CASES.items() if not c.blocks))
def test_one_process_without_pes_runs_the_single_gpu_kernel(name, tmp_path_factory, monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    case = DIST_CASES[name]
    module = generated(tmp_path_factory, case.module)
    mod = load_generated(module, f"appyc_dist_single_{name}")
    args = [torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in case.make_args(0, 1)]
    assert not mod._appyc_nvshmem_distributed()
    for _ in range(case.calls):
        getattr(mod, case.function)(*args)
    got = [a.numpy() for a in args if isinstance(a, torch.Tensor)]
    for g, want in zip(got, case.expected()):
        np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("name", ["distribute_copy_back", "distribute_jacobi2d", "distribute_three_sweeps"])
def test_a_slow_pe_is_never_overtaken(name, tmp_path_factory):
    """PE 1 sleeps before each put and after each wait, so PE 0 runs ahead as far as the flags
    let it: without a wait it reads a halo before its put lands, without an acknowledgement
    (the copied-back result) it puts the next rows into a halo PE 1 still reads."""
    case = DIST_CASES[name]
    module = generated(tmp_path_factory, case.module)
    try:
        per_pe = run_pes(module, case.function, name, 2, env={"APPYC_STANDIN_SLOW": "1:0.4"})
    except PEFailure as e:
        pytest.fail(str(e), pytrace=False)
    for pe, arrays in enumerate(per_pe):
        for i, want in enumerate(case.expected()):
            np.testing.assert_array_equal(arrays[f"a{i}"], want, err_msg=f"PE {pe}, array {i}")
