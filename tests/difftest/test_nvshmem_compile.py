"""Every NVSHMEM kernel of the multi-GPU samples compiles and links for sm_90 without a GPU
(nvshmem_compile.py), against nvidia-nvshmem-cu13 3.4.5's libnvshmem_device.bc: the only
NVSHMEM bitcode Triton 3.6 parses (3.8's is from a newer LLVM).

The library comes from the test venv (torch's dependency) or, when that lacks the wheel, from
the venv at $APPYC_NVSHMEM_VENV (create one with `python -m venv DIR && DIR/bin/pip install
nvidia-nvshmem-cu13==3.4.5`); without either the test is skipped, saying so.
"""
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from nvshmem_cases import CASES, DIST_CASES

# The hand-written samples and the `#pragma distribute` ones (one case of each module).
LINKED = {**CASES, **{n: c for n, c in DIST_CASES.items() if n in ("distribute_jacobi2d", "distribute_copy_back",
                                                                    "distribute_jacobi1d", "distribute_heat3d",
                                                                    "distribute_host_scalars")}}
from test_samples import compile_sample

HERE = Path(__file__).resolve().parent
WANT = "3.4.5"


def _library():
    try:
        have = metadata.version("nvidia-nvshmem-cu13")
    except metadata.PackageNotFoundError:
        have = None
    if have == WANT:
        import nvidia  # namespace package of the CUDA wheels

        for root in nvidia.__path__:
            lib = Path(root) / "nvshmem" / "lib" / "libnvshmem_device.bc"
            if lib.exists():
                return lib, None
    other = os.environ.get("APPYC_NVSHMEM_VENV")
    if other:
        hits = sorted(Path(other).glob("lib/python3*/site-packages/nvidia/nvshmem/lib/libnvshmem_device.bc"))
        if hits:
            return hits[0], None
        return None, f"APPYC_NVSHMEM_VENV={other} has no nvidia/nvshmem/lib/libnvshmem_device.bc"
    return None, (f"nvidia-nvshmem-cu13=={WANT} is not installed (found {have}) and APPYC_NVSHMEM_VENV "
                  "is not set")


@pytest.fixture(scope="module")
def sm90(tmp_path_factory):
    lib, why = _library()
    if lib is None:
        pytest.skip(f"no NVSHMEM device library to link against: {why}")
    work = tmp_path_factory.mktemp("nvshmem_sm90")
    modules = {name: str(compile_sample(c.module, work)) for name, c in LINKED.items()}
    req, res = work / "request.json", work / "result.json"
    req.write_text(json.dumps({"cases": modules}))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    # A fresh cache: Triton's cache key does not cover the extern symbol table, so a cached
    # binary could hide a misspelled symbol (checked: with a fresh cache, ptxas rejects one).
    env["TRITON_CACHE_DIR"] = str(work / "triton-cache")
    proc = subprocess.run([sys.executable, str(HERE / "nvshmem_compile.py"), str(lib), str(req), str(res)],
                          cwd=HERE, env=env, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        pytest.fail(f"nvshmem_compile.py failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}", pytrace=False)
    return json.loads(res.read_text())


@pytest.mark.parametrize("name", sorted(LINKED))
def test_nvshmem_kernels_link_for_sm90(name, sm90):
    r = sm90[name]
    assert r["host_error"] is None, r["host_error"]
    assert r["compiles"], "no kernel was launched"
    bad = [c for c in r["compiles"] if not c["ok"]]
    assert not bad, "\n\n".join(f"{c['kernel']} (MVL {c['mvl']}): {c['error']}" for c in bad)
