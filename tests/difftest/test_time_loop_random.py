"""1-D time loops drawn at random (fixed seed) with the host statements issue 23 moved onto the
device: a decaying host scalar, a counter, bare slice and element assignments, a reduction into
a scalar that a `while` condition or an `if ...: break` anywhere in the body reads,
`u, v = v, u`, and `if`s of scalar statements (`else`, `elif`, nested; the break after an
assignment in its branch, or with an `else`). Each must leave the arrays and return the values (types included: a counter
stays an int) of the NumPy run of its source under the Triton interpreter, and each runs as one
persistent kernel.

Called as a user calls the module, without the difftests' launch counter: that counter types
Python float arguments the way a GPU launch does (conftest._TypedFloat), which hid a launch
that stored a float register still a Python float (`.to` on a float) until a random search
found it.
"""
import random

import numpy as np
import pytest
import torch

from test_samples import compile_source

SEED, COUNT = 3, 16


def scalar_statement(rng):
    return rng.choice(["dt = dt * decay", "dt = dt * 1.25", "hits += 1", "hits = hits * 2 + 1"])


def draw_if(rng, tests):
    """An `if` of scalar statements: alone, with an `else`, an `elif`, or a nested `if`."""
    lines = [f"        if {rng.choice(tests)}:", f"            {scalar_statement(rng)}"]
    shape = rng.choice(["if", "else", "elif", "nested"])
    if shape == "else":
        lines += ["        else:", f"            {scalar_statement(rng)}"]
    elif shape == "elif":
        lines += [f"        elif {rng.choice(tests)}:", f"            {scalar_statement(rng)}"]
    elif shape == "nested":
        lines += [f"            if {rng.choice(tests)}:", f"                {scalar_statement(rng)}",
                  "            else:", f"                {scalar_statement(rng)}"]
    return lines


def draw(rng, idx):
    """`f{idx}(u, v, w, n, T, dt, decay, tol)` returning `(dt, it, diff, hits)`. A break (on the
    reduced change, the counter or the loop variable; alone in its `if`, after an assignment,
    or with an `else`) lands anywhere in the body, the first statement and the last included:
    the statements after it run only in iterations that go on. `if`s of scalar statements
    land anywhere too."""
    loop = rng.choice(["for", "for", "while"])
    lines = [f"def f{idx}(u, v, w, n, T, dt, decay, tol):", "    it = 0", "    hits = 0",
             "    diff = tol + 1.0",
             "    for t in range(T):" if loop == "for" else "    while diff > tol and it < T:"]
    body = [["        #pragma parallel for simd", "        for i in range(1, n - 1):",
             f"            v[i] = {rng.choice(['v[i] + ', '', '0.5 * v[i] + '])}"
             f"dt * (u[i - 1] - 2.0 * u[i] + u[i + 1]){rng.choice(['', ' + u[i]'])}"]]
    extras = set(rng.sample(["scalar", "count", "bare", "elem", "reduce", "swap", "phase2", "break",
                             "if", "if"], k=rng.randint(1, 5)))
    if loop == "while":
        extras |= {"reduce", "count"}
    if "reduce" in extras:
        body.append(["        diff = 0.0", "        #pragma parallel for simd reduction(max:diff)",
                     "        for i in range(1, n - 1):", "            w[i] = v[i] - u[i]",
                     "            diff = max(diff, abs(w[i]))"])
    if "phase2" in extras:
        body.append(["        #pragma parallel for simd", "        for i in range(n):", "            u[i] = u[i] + dt * v[i]"])
    if "bare" in extras:
        body.append([rng.choice(["        u[0] = v[1]", "        v[:] = 0.5 * v[:]", "        w[1:n - 1] = v[1:n - 1]"])])
    if "elem" in extras:
        body.append(["        w[0] = w[0] + dt"])
    if "scalar" in extras:
        body.append(["        dt = dt * decay"])
    if "count" in extras:
        body.append(["        it += 1"])
    if "swap" in extras:
        body.append(["        u, v = v, u"])
    # Tests that hold within a few steps: the break fires in most runs.
    tests = [t for t, on in (("diff < 4.0 * tol", "reduce"), ("it >= 2", "count"), ("t >= 2", loop))
             if on in extras or on == "for"]
    if "if" in extras:
        conds = ["dt > 0.2", "hits > 2", "it >= 1"] + (["t % 2 == 0"] if loop == "for" else []) \
            + (["diff < 4.0 * tol"] if "reduce" in extras else [])
        body.insert(rng.randint(0, len(body)), draw_if(rng, conds))
    if "break" in extras and tests:
        test = rng.choice(tests)
        form = rng.choice(["alone", "alone", "assigned", "else"])
        brk = [f"        if {test}:"] + ([f"            {scalar_statement(rng)}"] if form == "assigned" else []) \
            + ["            break"] + (["        else:", f"            {scalar_statement(rng)}"] if form == "else" else [])
        body.insert(rng.randint(0, len(body)), brk)
    lines += [line for statement in body for line in statement]
    lines.append("    return dt, it, diff, hits")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    rng = random.Random(SEED)
    programs = [draw(rng, i) for i in range(COUNT)]
    ref, gen, text = compile_source("import numpy as np\n\n\n" + "\n\n".join(programs),
                                    tmp_path_factory.mktemp("time_loop_random"), "time_loop_random")
    return programs, ref, gen, text


def test_every_drawn_loop_runs_as_one_persistent_kernel(drawn):
    """A break with more statements after it included: the draw must place some there."""
    programs, _, _, text = drawn
    persistent = [i for i in range(COUNT) if f"_launch_f{i}_persistent0(" in text]
    assert len(persistent) == COUNT, f"only {persistent} of {COUNT} loops are persistent"
    mid = [p for p in programs if "break" in p and not p.rstrip().split("\n")[-2].endswith("break")]
    assert len(mid) >= 3, f"{len(mid)} drawn loops break mid-body"
    # A scalar statement indented past the body's level is in a branch.
    ifs = [p for p in programs if any(line.startswith(" " * 12) and line.strip().startswith(("dt =", "hits"))
                                      for line in p.split("\n"))]
    assert len(ifs) >= 5, f"{len(ifs)} drawn loops assign scalars in an `if`"


@pytest.mark.parametrize("idx", range(COUNT))
def test_a_random_time_loop_matches_numpy(drawn, idx):
    programs, ref, gen, _ = drawn
    src = programs[idx]
    rng = np.random.default_rng(idx)
    for n, steps in ((int(rng.integers(5, 60)), int(rng.integers(1, 9))), (300, 6)):
        arrays = [rng.standard_normal(n) * 0.1 for _ in range(3)]
        tol = float(rng.choice([1e-3, 0.02, 0.05]))
        want_arrays = [a.copy() for a in arrays]
        want = getattr(ref, f"f{idx}")(*want_arrays, n, steps, 0.3, 0.9, tol)
        got_arrays = [torch.tensor(a) for a in arrays]
        got = getattr(gen, f"f{idx}")(*got_arrays, n, steps, 0.3, 0.9, tol)
        where = f"n={n} T={steps} tol={tol}\n{src}"
        for g, w in zip(got_arrays, want_arrays):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-9, atol=1e-12, err_msg=where)
        for g, w in zip(got, want):
            assert isinstance(g, int) == isinstance(w, (int, np.integer)), (g, w, where)
            np.testing.assert_allclose(float(g), float(w), rtol=1e-9, atol=1e-12, err_msg=where)
