"""The 2-D temporally blocked Gluon kernels (codegen/triton/gluon2d.rs) compiled for sm_90 without
a GPU (gluon2d_ptx.py, in a subprocess without TRITON_INTERPRET) at float32 and float64: they
compile, and every shared-memory access is one element wide. A window of the tile buffer starts
at any element, and Triton takes a shared view's base as 16-byte aligned: when it lowered the
float32 windows to ldmatrix/stmatrix, the j +- 1 windows faulted on the H100 ("misaligned
address"). The interpreter runs the Triton twin, so only this catches a regression without a GPU.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_samples import compile_sample

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("sample", ["stencils_2d"])
def test_gluon2d_shared_accesses_are_element_wide(sample, tmp_path):
    module = compile_sample(sample, tmp_path)
    result = tmp_path / "result.json"
    env = dict(os.environ, APPYC_TEST_DEVICE="cpu", APPYC_CACHE_DIR=str(tmp_path / "appyc-cache"))
    env.pop("TRITON_INTERPRET", None)
    proc = subprocess.run([sys.executable, str(HERE / "gluon2d_ptx.py"), str(module), str(result)],
                          env=env, cwd=str(HERE), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and result.exists(), proc.stdout[-4000:] + proc.stderr[-4000:]
    records = json.loads(result.read_text())
    assert records, "no _appyc_blocked_2d launch found in the generated module"
    problems = []
    for r in records:
        what = f"{r['kernel']} at {r['dtype']}"
        if r["error"]:
            problems.append(f"{what} does not compile for sm_90: {r['error']}")
            continue
        width = {"float32": "b32", "float64": "b64"}[r["dtype"]]
        shared = {op: n for op, n in r["ops"].items() if "shared" in op or "matrix" in op}
        wide = {op: n for op, n in shared.items() if op not in (f"ld.shared.{width}", f"st.shared.{width}")}
        if wide or not shared:
            problems.append(f"{what}: shared accesses {shared} (only ld/st.shared.{width} expected)")
    assert not problems, "\n".join(problems)
