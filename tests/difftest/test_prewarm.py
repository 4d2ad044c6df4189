"""The generated module's start-up builds (`_appyc_prewarm`, templates/prelude.py.jinja): importing
it starts Triton's `cuda_utils` build and the hashing of Triton's installation on threads, and
each kernel's launcher is built ahead from the signature Triton hands its `jit_cache_hook`. The
launcher source Triton's own `CudaLauncher` then asks for must be the one built ahead, and Triton
must wait for that build instead of running the C compiler again. Checked against the installed
Triton in a subprocess without the interpreter (prewarm_check.py), with the C compiler and the
module loader replaced by recorders: no GPU, no libcuda.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

from test_samples import compile_sample

HERE = Path(__file__).resolve().parent
KERNELS = ("_jacobi_2d_persistent0", "_jacobi_2d_persistent0_blocked_gluon")


def check(tmp_path, **env_extra):
    module = compile_sample("jacobi_2d", tmp_path)
    out = tmp_path / f"prewarm_{len(env_extra)}.json"
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "triton"),
               APPYC_CACHE_DIR=str(tmp_path / "appyc"), **env_extra)
    env.pop("TRITON_INTERPRET", None)
    proc = subprocess.run([sys.executable, str(HERE / "prewarm_check.py"), str(module), str(out)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(out.read_text())


def test_launchers_and_cuda_utils_are_built_ahead_and_waited_for(tmp_path):
    # Each build takes 2 s here, longer than either compile, so Triton asks for each launcher
    # while its build is still running: it must wait for it, not build it again.
    result = check(tmp_path, PREWARM_CHECK_BUILD_S="2")
    assert result["imported"] == ["cuda_utils"]
    assert result["triton_key"]
    for name in KERNELS:
        kernel = result["kernels"][name]
        assert kernel == {"asked": 1, "builds_of_it": 1, "waited": True}, (name, kernel)


def test_turned_off_by_the_environment(tmp_path):
    result = check(tmp_path, PREWARM_CHECK_BUILD_S="0.1", APPYC_PREWARM="0")
    assert result["imported"] == []
    for name in KERNELS:
        assert result["kernels"][name]["builds_of_it"] == 0, name
