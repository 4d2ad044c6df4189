"""The Python binding (`cargo build --release --features python`): `appyc.compile` gives the
same text as the command line, and compile errors raise `appyc.CompileError` with the
`file:line:col` diagnostic. scripts/test.sh builds the extension before running pytest."""
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_samples import REPO, SAMPLES, appyc_bin


@pytest.fixture(scope="module")
def appyc_module(tmp_path_factory):
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    lib = target / "release" / "libappyc.so"
    if not lib.exists():
        pytest.fail(f"{lib} not found: build it with `cargo build --release --features python`",
                    pytrace=False)
    where = tmp_path_factory.mktemp("pyext")
    shutil.copy(lib, where / "appyc.abi3.so")
    spec = importlib.util.spec_from_file_location("appyc", where / "appyc.abi3.so")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "compile"):
        pytest.fail(f"{lib} was built without `--features python`", pytrace=False)
    return module


@pytest.mark.parametrize("sample", ["spmv_csr", "softmax_loops"])
def test_compile_matches_the_command_line(appyc_module, sample):
    path = SAMPLES / f"{sample}.py"
    rel = f"samples/{sample}.py"
    cli = subprocess.run([str(appyc_bin()), rel, "-o", "-"], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout
    assert appyc_module.compile(path.read_text(), rel) == cli
    lowered = subprocess.run([str(appyc_bin()), rel, "--emit", "lowered", "--mvl", "256", "-o", "-"],
                             cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert appyc_module.compile(path.read_text(), rel, emit="lowered", mvl=256) == lowered


def test_compile_error_carries_the_diagnostic(appyc_module):
    src = "def f(A, N):\n    #pragma paralel for\n    for i in range(N):\n        A[i] = 0.0\n"
    with pytest.raises(appyc_module.CompileError) as err:
        appyc_module.compile(src, "k.py")
    text = str(err.value)
    assert text.startswith("k.py:2:13: error: unknown directive `paralel for`"), text
    assert "did you mean `parallel for`?" in text
    with pytest.raises(ValueError):
        appyc_module.compile(src, "k.py", mvl=100)
    assert isinstance(appyc_module.__version__, str)
