"""The temporally blocked Gluon kernels, 2-D (codegen/triton/gluon2d.rs), 3-D
(codegen/triton/gluon3d.rs) and 1-D (codegen/triton/blocked.rs), compiled for sm_90 without a GPU (gluon_ptx.py, in a subprocess
without TRITON_INTERPRET) at float32 and float64: they compile, and every shared-memory access is
one element wide. A window of a shared buffer starts at any element, and Triton takes a shared
view's base as 16-byte aligned: when it lowered the float32 2-D windows to ldmatrix/stmatrix, the
j +- 1 windows faulted on the H100 ("misaligned address"). The interpreter runs the Triton twins,
so only this catches a regression without a GPU.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_samples import compile_sample

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("sample, forms", [("stencils_2d", {"2d"}), ("stencils_3d", {"3d"}),
                                           ("time_loops", {"1d", "2d"}),
                                           ("natural_loops", {"1d", "2d"})])
def test_gluon_shared_accesses_are_element_wide(sample, forms, tmp_path):
    module = compile_sample(sample, tmp_path)
    result = tmp_path / "result.json"
    env = dict(os.environ, APPYC_TEST_DEVICE="cpu", APPYC_CACHE_DIR=str(tmp_path / "appyc-cache"))
    env.pop("TRITON_INTERPRET", None)
    proc = subprocess.run([sys.executable, str(HERE / "gluon_ptx.py"), str(module), str(result)],
                          env=env, cwd=str(HERE), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and result.exists(), proc.stdout[-4000:] + proc.stderr[-4000:]
    records = json.loads(result.read_text())
    assert {r["form"] for r in records} == forms, f"blocked launches found: {records}"
    problems = []
    for r in records:
        what = f"{r['kernel']} ({r['form']}) at {r['dtype']}"
        if r["error"]:
            problems.append(f"{what} does not compile for sm_90: {r['error']}")
            continue
        width = {"float32": "b32", "float64": "b64"}[r["dtype"]]
        shared = {op: n for op, n in r["ops"].items() if "shared" in op or "matrix" in op}
        # The 1-D kernel's grid barrier spins on a scalar int64 atomic, whose value Triton hands
        # to every thread through one aligned 64-bit shared store and load.
        spins = r["ops"].get("ld.global.gpu.acquire.b64", 0)
        for op in ("ld.shared.b64", "st.shared.b64"):
            if width == "b32" and r["form"] in ("1d", "3d") and op in shared:
                shared[op] -= min(shared[op], spins)
        wide = {op: n for op, n in shared.items()
                if n and op not in (f"ld.shared.{width}", f"st.shared.{width}")}
        if wide or not shared:
            problems.append(f"{what}: shared accesses {shared} (only ld/st.shared.{width} expected)")
    assert not problems, "\n".join(problems)
