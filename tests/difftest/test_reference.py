"""Every example of the pragma reference (docs/pragmas.md, generated from pragma-spec/pragmas.yaml)
compiled by appyc and run under the Triton interpreter against NumPy.

An example is statements of a function body; its spec entry's `inputs` names each value it reads,
in order, as a Python expression (with `np`, a seeded generator `rng` and the earlier inputs). The
example becomes `def example(<inputs>):`; both sides get copies of the same inputs (torch tensors
for the compiled one) and every array must end equal (float reassociation allowed).
"""
import textwrap
import zlib
from pathlib import Path

import numpy as np
import pytest
import yaml

from cases import default_tol
from test_samples import REPO, appyc_bin, load_generated, load_module, without_appy

SPEC = REPO / "pragma-spec" / "pragmas.yaml"
REFERENCE = REPO / "docs" / "pragmas.md"


def entries():
    """(id, example, inputs) for every directive, clause, property and the dimension pragma."""
    spec = yaml.safe_load(SPEC.read_text())
    out = [(f"directive:{d['name']}", d.get("example"), d.get("inputs")) for d in spec["directives"]]
    out += [(f"clause:{c['name']}", c.get("example"), c.get("inputs")) for c in spec["clauses"]]
    dp = spec["dimension_pragma"]
    out.append(("dimension_pragma", dp.get("example"), dp.get("inputs")))
    out += [(f"property:{p['name']}", p.get("example"), p.get("inputs")) for p in dp["properties"]]
    return out


ENTRIES = entries()


def test_every_entry_has_an_example_with_inputs_and_is_in_the_reference():
    reference = REFERENCE.read_text()
    assert len(ENTRIES) >= 11
    for name, example, inputs in ENTRIES:
        assert example and example.strip(), f"{name}: no example"
        assert inputs, f"{name}: no inputs for its example"
        assert example.rstrip() in reference, f"{name}: example missing from docs/pragmas.md"


def make_inputs(name, inputs):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    env = {"np": np, "rng": rng}
    values = []
    for param, expr in inputs.items():
        env[param] = eval(str(expr), env)  # noqa: S307 (the spec is ours)
        values.append(env[param])
    return values


@pytest.mark.parametrize("name,example,inputs", ENTRIES, ids=[e[0] for e in ENTRIES])
@pytest.mark.parametrize("mvl", [16, 128])
def test_reference_example(name, example, inputs, mvl, tmp_path, launch_counter, monkeypatch):
    import subprocess

    import torch

    params = list(inputs)
    src = tmp_path / "example.py"
    src.write_text("import numpy as np\n\n\ndef example(" + ", ".join(params) + "):\n"
                   + textwrap.indent(example, "    "))
    gen = tmp_path / "example_gen.py"
    proc = subprocess.run([str(appyc_bin()), str(src), "-o", str(gen)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, f"{name}: appyc failed:\n{proc.stderr}\n{src.read_text()}"
    monkeypatch.setenv("APPYC_MVL", str(mvl))
    tag = name.replace(":", "_").replace(" ", "_")
    ref = load_module(src, f"appyc_refex_{tag}_{mvl}")
    compiled = load_generated(gen, f"appyc_genex_{tag}_{mvl}")

    values = make_inputs(name, inputs)
    np_args = [v.copy() if isinstance(v, np.ndarray) else v for v in values]
    t_args = [torch.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v for v in values]
    ref.example(*np_args)
    launch_counter.count = 0
    with without_appy():
        compiled.example(*t_args)
    assert launch_counter.count >= 1, f"{name}: no kernel launched"

    changed = False
    for p, before, e, a in zip(params, values, np_args, t_args):
        if not isinstance(e, np.ndarray):
            continue
        changed |= not np.array_equal(before, e)
        a = a.numpy()
        assert a.dtype == e.dtype, f"{name}: {p} dtype {a.dtype} != {e.dtype}"
        tol = default_tol(e.dtype)
        if tol is None:
            np.testing.assert_array_equal(a, e, err_msg=f"{name}: {p}")
        else:
            np.testing.assert_allclose(a, e, rtol=tol[0], atol=tol[1], err_msg=f"{name}: {p}")
    assert changed, f"{name}: the NumPy example changed nothing, so the comparison proves nothing"
