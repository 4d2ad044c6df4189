"""The benchmark's natural-style sources (scripts/npbench_natural/, written as APPy users write
them): each against the ours source of its kernel or bench_npbench.NATURAL_MATH in plain NumPy,
and each compiled by appyc and run under the interpreter against the NumPy run of the unchanged
source, at the benchmark's `small` size and a second shape. So the natural table's sources
cannot drift from the math, nor appyc's output from them, unnoticed."""
import subprocess

import numpy as np
import pytest
import torch

from test_npbench_math import B, REPO
from test_samples import appyc_bin, load_generated

NATURAL = sorted(B.SET_KERNELS["natural"])


def inputs(kernel, sizes):
    dims = dict(B.KERNELS[kernel]["small"])
    if sizes == "other":
        dims = {k: v + 3 for k, v in dims.items()}
    return B.KERNELS[kernel]["make"](np.random.default_rng(11), **dims)


@pytest.mark.parametrize("kernel", NATURAL)
def test_natural_source_matches_math(kernel):
    assert B.check_source_against_math(kernel, inputs(kernel, "small"), "natural") == ""


@pytest.mark.parametrize("kernel", NATURAL)
@pytest.mark.parametrize("sizes", ["small", "other"])
def test_natural_source_compiled_matches_its_numpy_run(kernel, sizes, tmp_path, launch_counter):
    out = tmp_path / f"{kernel}_gen.py"
    src = B.SET_DIRS["natural"] / f"{kernel}.py"
    proc = subprocess.run([str(appyc_bin()), str(src), "-o", str(out)], capture_output=True,
                          text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    gen = load_generated(out, f"appyc_natural_{kernel}_{sizes}")
    args = inputs(kernel, sizes)
    want, _ = B.reference_outputs(kernel, B.load_source(kernel, "natural"), args)
    launch_counter.count = 0
    t_args = [(n, torch.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v) for n, v in args]
    ret = getattr(gen, kernel)(*[v for _, v in t_args])
    assert launch_counter.count >= 1, "no Triton kernel was launched"
    got = {n: v.numpy() for n, v in t_args if n in B.KERNELS[kernel]["writes"]}
    rets = () if ret is None else (tuple(ret) if isinstance(ret, tuple) else (ret,))
    got.update({f"ret{i}": np.asarray(v.cpu() if isinstance(v, torch.Tensor) else v)
                for i, v in enumerate(rets)})
    assert set(got) == set(want)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-9, atol=1e-11, err_msg=name)
