"""Accumulation loops drawn at random (fixed seed), each gathered into one region by
passes/gather.rs and run under the Triton interpreter against the NumPy run of its source.

The pass inverts loop bounds (`k < v < n` becomes a sum over `v` from `k + 1`), moves each
bound to the later variable, forward-substitutes private rows and merges the updates of one
target: hand-written samples cover a few shapes; this covers their combinations. Every program
drawn here must be gathered (the generated function has no host loop left), compile, and give
NumPy's result at sizes that are not multiples of a block. A random search with other seeds
found the column-bounded sums (`C[j, k]`, `k <= v`) that once failed to compile.
"""
import random

import numpy as np
import pytest
import torch

from test_samples import compile_source

SEED, COUNT = 11, 24


def _offset(var, off):
    return var if off == 0 else (f"{var} + {off}" if off > 0 else f"{var} - {-off}")


def draw(rng, idx):
    """One function `f{idx}(alpha, C, A, B, n, m)`: a host loop over `v` whose `parallel for`
    over `j` adds into `C` over a `k` range tied to `v`; maybe a private row summed alongside
    and added by a bare row update. Returns its source and whether `C` is `(m, n + 3)`."""
    kind = rng.choice(["below", "below_incl", "above", "window", "full"])
    v_lo = 2 if kind == "window" else rng.choice([0, 0, 1, 2])   # v - 2 must not go negative
    v_hi = rng.choice([0, 0, 1])
    k_range = {
        "below": f"range({rng.choice(['', '1, '])}{_offset('v', rng.choice([0, -1]))})",
        "below_incl": f"range({_offset('v', 1)})",
        "above": f"range({_offset('v', rng.choice([1, 2]))}, n)",
        "window": f"range({_offset('v', -2)}, {_offset('v', 1)})",
        "full": "range(n)",
    }[kind]
    shift = rng.choice([0, 0, 1]) if kind in ("below", "window") else 0
    transposed = rng.random() < 0.3
    target = f"C[j, {_offset('k', shift)}]" if transposed else f"C[{_offset('k', shift)}, j]"
    value = rng.choice(["A[v, k] * B[v, j]", "alpha * B[v, j] * A[v, k]", "A[k, v] - B[v, j]", "B[v, j]"])
    row_update = not transposed and rng.random() < 0.5
    private = row_update and rng.random() < 0.5
    lines = [f"def f{idx}(alpha, C, A, B, n, m):"]
    if private:
        lines.append("    t = np.empty((C.shape[1],), dtype=C.dtype)")
    lines += [f"    for v in range({v_lo}, n - {v_hi}):",
              "        #pragma parallel for",
              "        for j in range(m):"]
    if private:
        lines.append("            acc = 0.0")
    lines += ["            #pragma simd",
              f"            for k in {k_range}:",
              f"                {target} += {value}"]
    if private:
        lines += ["                acc += B[k, j] * A[v, k]", "            t[j] = acc"]
    if row_update:
        lines.append("        C[v, :] += alpha * B[v, :]" + (" + t" if private else ""))
    return "\n".join(lines) + "\n", transposed



@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    rng = random.Random(SEED)
    programs = [draw(rng, i) for i in range(COUNT)]
    ref, gen, text = compile_source("import numpy as np\n\n\n" + "\n\n".join(src for src, _ in programs),
                                    tmp_path_factory.mktemp("gather_random"), "gather_random")
    return programs, ref, gen, text


@pytest.mark.parametrize("idx", range(COUNT))
def test_a_random_accumulation_loop_is_gathered_and_matches_numpy(drawn, idx):
    programs, ref, gen, text = drawn
    src, transposed = programs[idx]
    body = text.split(f"\ndef f{idx}(")[1].split("\ndef ")[0]
    assert "for v in range" not in body, f"not gathered:\n{src}\n{body}"
    rng = np.random.default_rng(idx)
    for n, m in ((int(rng.integers(3, 14)), int(rng.integers(2, 12))), (19, 7)):
        C = rng.standard_normal((m, n + 3) if transposed else (n + 3, m))
        A = rng.standard_normal((n + 3, n + 3))
        B = rng.standard_normal((n + 3, m))
        want = C.copy()
        getattr(ref, f"f{idx}")(0.7, want, A.copy(), B.copy(), n, m)
        got = torch.tensor(C)
        getattr(gen, f"f{idx}")(0.7, got, torch.tensor(A), torch.tensor(B), n, m)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-9, atol=1e-9, err_msg=f"n={n} m={m}\n{src}")
