"""2-D stencil time loops drawn at random (fixed seed), compiled and run under the Triton
interpreter against the NumPy run of their source.

The temporal analysis (schedule/temporal.rs) decides which loops run blocked and how far a step
reads; the blocked twin (codegen/triton/gluon2d.rs, the Triton form the interpreter runs at every
size, its scratch and spare poisoned with NaN) computes them in tiles. samples/stencils_2d.py
covers named shapes; this draws their combinations: reach 1 or 2, two to six terms at any
offsets within it, interiors that start and end at different rows and columns, two alternating
phases or one phase with `A, B = B, A` (with or without boundary copies), float32 and float64,
step counts the group size does not divide. Every drawn program must give NumPy's arrays (both
buffers, and the returned pair of a swap loop), and most must run blocked.
"""
import random

import numpy as np
import pytest
import torch

from test_samples import compile_source

SEED, COUNT = 5, 12


def _shifted(var, d):
    return var if d == 0 else (f"{var} + {d}" if d > 0 else f"{var} - {-d}")


def _stencil(rng, src, reach):
    terms = [f"{src}[{_shifted('i', rng.randint(-reach, reach))}, {_shifted('j', rng.randint(-reach, reach))}]"
             for _ in range(rng.randint(2, 6))]
    return " + ".join(f"{rng.choice(['0.2', '0.1', '0.25', 'c', '0.5'])} * {t}" for t in terms)


def draw(rng, idx):
    """`f{idx}(A, B, M, N, T, c)` and whether it swaps (then it returns `A, B`)."""
    reach = rng.choice([1, 1, 2])
    rows = f"range({reach + rng.choice([0, 1])}, M - {reach + rng.choice([0, 0, 1])})"
    cols = f"range({reach + rng.choice([0, 1])}, N - {reach})"

    def phase(dst, src):
        return ["        #pragma parallel for", f"        for i in {rows}:", "            #pragma simd",
                f"            for j in {cols}:", f"                {dst}[i, j] = {_stencil(rng, src, reach)}"]

    swap = rng.random() < 0.5
    lines = [f"def f{idx}(A, B, M, N, T, c):", "    for t in range(T):", *phase("B", "A")]
    if swap:
        if rng.random() < 0.7:
            lines += ["        B[0, :] = A[0, :]", "        B[M - 1, :] = A[M - 1, :]",
                      "        B[:, 0] = A[:, 0]", "        B[:, N - 1] = A[:, N - 1]"]
        lines += ["        A, B = B, A", "    return A, B"]
    else:
        lines += phase("A", "B")
    return "\n".join(lines) + "\n", swap



@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    rng = random.Random(SEED)
    programs = [draw(rng, i) for i in range(COUNT)]
    ref, gen, text = compile_source("import numpy as np\n\n\n" + "\n\n".join(src for src, _ in programs),
                                    tmp_path_factory.mktemp("stencil2d_random"), "stencil2d_random")
    return programs, ref, gen, text


def test_most_drawn_loops_run_blocked(drawn):
    programs, _, _, text = drawn
    blocked = sum(f"_f{i}_persistent0_blocked_twin" in text for i in range(COUNT))
    assert blocked >= COUNT // 2, f"only {blocked} of {COUNT} drawn loops are blocked"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("idx", range(COUNT))
def test_a_random_2d_stencil_loop_matches_numpy(drawn, idx, dtype):
    programs, ref, gen, _ = drawn
    src, swap = programs[idx]
    rng = np.random.default_rng(idx)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    for M, N, T in ((int(rng.integers(6, 40)), int(rng.integers(6, 40)), int(rng.integers(1, 8))), (37, 45, 5)):
        A = rng.standard_normal((M, N)).astype(dtype)
        B = rng.standard_normal((M, N)).astype(dtype)
        want_a, want_b = A.copy(), B.copy()
        want = getattr(ref, f"f{idx}")(want_a, want_b, M, N, T, 0.3)
        got_a, got_b = torch.tensor(A), torch.tensor(B)
        got = getattr(gen, f"f{idx}")(got_a, got_b, M, N, T, 0.3)
        where = f"M={M} N={N} T={T}\n{src}"
        np.testing.assert_allclose(got_a.numpy(), want_a, **tol, err_msg=where)
        np.testing.assert_allclose(got_b.numpy(), want_b, **tol, err_msg=where)
        if swap:
            for g, w in zip(got, want):
                np.testing.assert_allclose(g.numpy(), w, **tol, err_msg=where)
