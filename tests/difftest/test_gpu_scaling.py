"""scripts/gpu_scaling.py without a GPU: the global problems, partitions and torch references its
checks use agree with nvshmem_cases.py (which the stand-in difftests hold the samples to), and
its report renders from recorded runs."""
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from nvshmem_cases import CASES, Jacobi2D, Jacobi3D, JacobiGrid

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gs():
    spec = importlib.util.spec_from_file_location("gpu_scaling", ROOT / "scripts" / "gpu_scaling.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _halo(prog):
    return range(prog.dims) if prog.layout == "grid" else (0,)


@pytest.mark.parametrize("world", [1, 2, 3, 4, 8])
def test_blocks_are_the_cases_arguments(gs, world):
    """Each rank's arrays are what nvshmem_cases.py's make_args gives that PE of that case."""
    cases = {"l8": Jacobi2D("x", rows=5, cols=7, T=1), "slab3d": Jacobi3D(planes=3, m=4, n=5, T=1),
             "grid2d": JacobiGrid("x", "jacobi_2d", (3, 4), T=1, seed=5),
             "grid3d": JacobiGrid("x", "jacobi_3d", (2, 3, 4), T=1, seed=6)}
    for key, case in cases.items():
        prog = gs.PROGRAMS[key]
        G = case.global_grid(world)
        for rank in range(world):
            starts, sizes = gs.partition(prog, G.shape, world, rank)
            got = gs.cut(torch.from_numpy(G), starts, sizes, _halo(prog)).numpy()
            np.testing.assert_array_equal(got, case.make_args(rank, world)[0], err_msg=f"{key} rank {rank}")


@pytest.mark.parametrize("key", ["l8", "slab3d", "grid2d", "grid3d"])
def test_torch_reference_is_the_numpy_one(gs, key):
    case = {"l8": CASES["jacobi2d_l8"], "slab3d": CASES["jacobi3d"], "grid2d": CASES["jacobi2d_grid"],
            "grid3d": CASES["jacobi3d_grid"]}[key]
    G = case.global_grid(4)
    got = gs.reference(gs.PROGRAMS[key], torch.from_numpy(G), case.T)[0].numpy()
    np.testing.assert_allclose(got, case.expected(4), rtol=0, atol=1e-12)


@pytest.mark.parametrize("key", ["dist2d", "dist3d"])
def test_distribute_reference_is_the_source_on_numpy(gs, key):
    prog = gs.PROGRAMS[key]
    shape = (11, 9) if prog.dims == 2 else (7, 6, 5)
    G = np.random.default_rng(3).standard_normal(shape)
    sys.path.insert(0, str(ROOT / "samples"))
    source = importlib.import_module(prog.module)
    A, B = G.copy(), G.copy()
    getattr(source, prog.function)(A, B, *shape, 2)
    got = gs.reference(prog, torch.from_numpy(G), 2)
    np.testing.assert_array_equal(got[0].numpy(), A)
    np.testing.assert_array_equal(got[1].numpy(), B)


def test_global_shapes(gs):
    P = gs.PROGRAMS
    assert gs.global_shape(P["l8"], "weak_large", 4) == (4 * 8192, 8192)
    assert gs.global_shape(P["grid2d"], "weak_large", 4) == (2 * 8192, 2 * 8192)
    assert gs.global_shape(P["grid3d"], "weak_small", 8) == (256, 256, 256)
    assert gs.global_shape(P["dist3d"], "strong", 4) == (512, 512, 512)
    for key in P:
        for w in (1, 2, 4, 8):
            shape = gs.global_shape(P[key], "strong", w)
            _, sizes = gs.partition(P[key], shape, w, w - 1)
            assert all(s > 0 for s in sizes)


def test_report_renders(gs, tmp_path):
    def run(world, us):
        cases = {}
        for key in ("l8", "grid3d"):
            for sc in gs.SCENARIOS:
                cases[f"{key}/{sc}"] = {"program": key, "scenario": sc, "global": [1], "error": 0.0, "ok": True,
                                        "check_iterations": 1, "us": us * (world if sc == "strong" and False else 1),
                                        "us_ranks": [us] * world}
        cases["grid3d/strong"]["us"] = 100.0 / world
        return {"world": world, "device": "GPU", "torch": "t", "triton": "x", "quick": False, "cases": cases}

    for w, us in ((1, 100.0), (2, 101.0), (4, 104.0)):
        (tmp_path / f"scaling_w{w}.json").write_text(json.dumps(run(w, us)))
    (tmp_path / "jax_scaling.json").write_text(json.dumps({
        "jax": "0", "device": "GPU x 4", "correct": {"1": {"error": 0.0, "ok": True}},
        "cases": {"1/weak_large": {"program": "jax", "scenario": "weak_large", "us": 300.0}}}))
    args = type("A", (), {"report": str(tmp_path), "md": "", "png": "", "keep_head": False})()
    gs.report(args)
    text = (tmp_path / "scaling.md").read_text()
    assert "| Jacobi-2D row slabs (Listing 8) | 8192^2 per GPU | 100.0 | 101.0 | 104.0 | 99.0 % | 96.2 % |" in text
    assert "| Jacobi-3D 3-D process grid | 512^3 in all | 100.0 | 50.0 | 25.0 | 100.0 % | 100.0 % |" in text
    assert "3.00x" in text
