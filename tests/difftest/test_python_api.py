"""The Python package appyc-aot (pyproject.toml, built with maturin and pip-installed into the test
venv by scripts/test.sh): `appyc_aot.compile` gives the same text as the command line, compile
errors raise `appyc_aot.CompileError` with the `file:line:col` diagnostic, the wheel's `appyc`
command is the command line, and `@appyc_aot.jit` compiles at the first call and runs the
generated launcher under the Triton interpreter like the NumPy original."""
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from test_samples import REPO, SAMPLES, appyc_bin


@pytest.fixture(scope="module")
def aot():
    try:
        import appyc_aot
    except ImportError as e:
        pytest.fail(f"appyc_aot is not installed ({e}): `maturin build --release` and pip-install "
                    "the wheel (scripts/test.sh does)", pytrace=False)
    assert "site-packages" in appyc_aot.__file__, appyc_aot.__file__
    return appyc_aot


@pytest.mark.parametrize("sample", ["spmv_csr", "softmax_loops"])
def test_compile_matches_the_command_line(aot, sample):
    path = SAMPLES / f"{sample}.py"
    rel = f"samples/{sample}.py"
    cli = subprocess.run([str(appyc_bin()), rel, "-o", "-"], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout
    assert aot.compile(path.read_text(), rel) == cli
    lowered = subprocess.run([str(appyc_bin()), rel, "--emit", "lowered", "--mvl", "256", "-o", "-"],
                             cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert aot.compile(path.read_text(), rel, emit="lowered", mvl=256) == lowered


def test_compile_error_carries_the_diagnostic(aot):
    src = "def f(A, N):\n    #pragma paralel for\n    for i in range(N):\n        A[i] = 0.0\n"
    with pytest.raises(aot.CompileError) as err:
        aot.compile(src, "k.py")
    text = str(err.value)
    assert text.startswith("k.py:2:13: error: unknown directive `paralel for`"), text
    assert "did you mean `parallel for`?" in text
    assert issubclass(aot.CompileError, ValueError)
    with pytest.raises(ValueError):
        aot.compile(src, "k.py", mvl=100)
    assert isinstance(aot.__version__, str)


def test_warnings_are_python_warnings_or_errors_when_denied(aot):
    if not hasattr(aot, "CompileWarning"):
        pytest.skip("the installed wheel predates warnings: rebuild it (scripts/test.sh does)")
    src = "def f(A, N):\n    #PRAGMA parallel for\n    for i in range(N):\n        A[i] = 0.0\n"
    with pytest.warns(aot.CompileWarning) as caught:
        out = aot.compile(src, "k.py")
    assert out  # compiled: the near-miss comment is only a comment
    text = str(caught[0].message)
    assert text.startswith("k.py:2:5: warning: this comment looks like a pragma"), text
    assert "help: write `#pragma parallel for`" in text
    assert issubclass(aot.CompileWarning, UserWarning)
    with pytest.raises(aot.CompileError) as err:
        aot.compile(src, "k.py", deny_warnings=True)
    assert "1 warning(s) denied" in str(err.value)


def test_the_wheel_installs_the_appyc_command(aot, tmp_path):
    exe = Path(sys.executable).parent / "appyc"
    assert exe.exists(), f"no {exe}: the wheel's console script"
    rel = "samples/vector_add.py"
    ours = subprocess.run([str(exe), rel, "-o", "-"], cwd=REPO, capture_output=True, text=True)
    rust = subprocess.run([str(appyc_bin()), rel, "-o", "-"], cwd=REPO, capture_output=True,
                          text=True)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == rust.stdout
    r = subprocess.run([str(exe), "tests/bad/typo_directive.py", "-o", str(tmp_path / "o.py")],
                       cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 1 and "error: unknown directive" in r.stderr
    assert not (tmp_path / "o.py").exists()
    assert subprocess.run([str(exe), "--no-such-flag"], capture_output=True).returncode == 2


KERNELS = '''\
import numpy as np
from appyc_aot import jit


@jit
def axpy(A, B, N):
    C = np.zeros_like(A)
    #pragma parallel for simd
    for i in range(N):
        C[i] = 2.0 * A[i] + B[i]
    return C


@jit(mvl=16)
def row_sums(A, r, M, N):
    #pragma parallel for
    for i in range(M):
        s = 0.0
        #pragma simd
        for j in range(N):
            s += A[i, j]
        r[i] = s


@jit
def typo(A, N):
    #pragma paralel for
    for i in range(N):
        A[i] = 0.0
'''


def test_jit_compiles_at_first_call_and_caches(aot, tmp_path, monkeypatch, launch_counter):
    import torch
    from appyc_aot import _jit

    monkeypatch.setenv("APPYC_AOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(_jit, "_launchers", {})
    calls = []
    real = _jit._compile
    monkeypatch.setattr(_jit, "_compile", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    src = tmp_path / "kernels.py"
    src.write_text(KERNELS)
    spec = importlib.util.spec_from_file_location("jit_kernels", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert calls == [], "compiled before the first call"

    rng = np.random.default_rng(7)
    A, B = rng.standard_normal(37), rng.standard_normal(37)
    expected = mod.axpy.__wrapped__(A.copy(), B.copy(), 37)
    got = mod.axpy(torch.from_numpy(A), torch.from_numpy(B), 37)
    assert isinstance(got, torch.Tensor) and launch_counter.count >= 1
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    assert calls == [str(src)]
    mod.axpy(torch.from_numpy(A), torch.from_numpy(B), 37)
    assert calls == [str(src)], "recompiled on the second call"
    assert any(k.startswith("_launch_axpy") for k in mod.axpy.launcher().__globals__)

    M2 = rng.standard_normal((5, 41))
    r_np, r_t = np.zeros(5), torch.zeros(5, dtype=torch.float64)
    mod.row_sums.__wrapped__(M2, r_np, 5, 41)
    mod.row_sums(torch.from_numpy(M2), r_t, 5, 41)
    np.testing.assert_allclose(r_t.numpy(), r_np, rtol=1e-10)
    gen = mod.row_sums.launcher().__globals__["__file__"]
    # A fixed MVL: the tuning table's default is (16, warps) with no candidates.
    assert "(16, 4), ())" in Path(gen).read_text(), "mvl=16 reached appyc"

    # A fresh process state finds the module on disk: no second compilation.
    monkeypatch.setattr(_jit, "_launchers", {})
    mod.axpy(torch.from_numpy(A), torch.from_numpy(B), 37)
    assert calls == [str(src), str(src)]

    # Errors point into the original file, at the first call.
    with pytest.raises(aot.CompileError) as err:
        mod.typo(torch.zeros(3), 3)
    line = KERNELS.splitlines().index("    #pragma paralel for") + 1
    assert str(err.value).startswith(f"{src}:{line}:13: error: unknown directive"), str(err.value)
