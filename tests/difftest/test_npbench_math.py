"""The NPBench sources in scripts/npbench/ whose loops are scalar (the shapes appyc turns into
matrix-product tiles), run as plain NumPy, against independent NumPy expressions of their math
(bench_npbench.MATH, also the benchmark's reference at the `paper` sizes), and symm and trmm
against PolyBench's own loop definitions run in plain Python. No appyc, no Triton: this checks
the sources and the benchmark's reference, so neither can drift from the math unnoticed.
"""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def bench():
    name = "bench_npbench_for_tests"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / "bench_npbench.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


B = bench()


@pytest.mark.parametrize("kernel", sorted(B.MATH))
@pytest.mark.parametrize("sizes", ["small", "other"])
def test_source_matches_math(kernel, sizes):
    spec = B.KERNELS[kernel]
    dims = spec["small"]
    if sizes == "other":  # a second shape
        dims = {k: v + 3 for k, v in dims.items()}
    args = spec["make"](np.random.default_rng(7), **dims)
    assert B.check_source_against_math(kernel, args) == ""


def polybench_symm(alpha, beta, C, A, B_):
    M, N = C.shape
    for i in range(M):
        for j in range(N):
            temp2 = 0.0
            for k in range(i):
                C[k, j] += alpha * B_[i, j] * A[i, k]
                temp2 += B_[k, j] * A[i, k]
            C[i, j] = beta * C[i, j] + alpha * B_[i, j] * A[i, i] + alpha * temp2


def polybench_trmm(alpha, A, B_):
    M, N = B_.shape
    for i in range(M):
        for j in range(N):
            for k in range(i + 1, M):
                B_[i, j] += A[k, i] * B_[k, j]
            B_[i, j] = alpha * B_[i, j]


@pytest.mark.parametrize("kernel,loops", [("symm", polybench_symm), ("trmm", polybench_trmm)])
def test_source_matches_polybench_loops(kernel, loops):
    spec = B.KERNELS[kernel]
    args = spec["make"](np.random.default_rng(11), **spec["small"])
    got, _ = B.reference_outputs(kernel, B.load_source(kernel), args)
    want, _ = B.reference_outputs(kernel, loops, args)
    for name in spec["writes"]:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-12, atol=1e-12)
