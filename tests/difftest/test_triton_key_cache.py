"""The generated module's memo of Triton's installation hash (`_appyc_remember_triton_key`), run on
the CPU against a stand-in Triton tree: Triton's own `triton_key()` must run only when no stored
answer matches the installation's files as they are now, and its answer must be handed back
unchanged.
"""
import importlib.util
import json
import os

import pytest
from triton.runtime import cache

from test_samples import compile_sample


@pytest.fixture
def installation(tmp_path, monkeypatch):
    """A stand-in Triton tree whose files the stamp covers, a private cache directory, and a
    counting stand-in for Triton's hash. `remember()` runs the generated code as a new process's
    import would (Triton's function unpatched, a fresh counter)."""
    root = tmp_path / "triton"
    for rel, text in {"__init__.py": "__version__ = '3.6.0'\n", "_C/libtriton.so": "binary",
                      "runtime/cache.py": "# cache\n", "language/core.py": "# core\n",
                      "compiler/compiler.py": "# compiler\n", "backends/nvidia/driver.py": "# d\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    monkeypatch.setattr(cache, "__file__", str(root / "runtime" / "cache.py"))
    monkeypatch.setenv("APPYC_CACHE_DIR", str(tmp_path / "appyc"))
    monkeypatch.delenv("APPYC_TRITON_KEY_CACHE", raising=False)
    path = compile_sample("vector_add", tmp_path)
    spec = importlib.util.spec_from_file_location("triton_key_vector_add", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    class Installation:
        calls = 0
        answer = "3.6.0-hash-of-everything"

        def remember(self):
            def triton_key():
                self.calls += 1
                return self.answer

            monkeypatch.setattr(cache, "triton_key", triton_key)
            mod._appyc_remember_triton_key()
            return cache.triton_key

    inst = Installation()
    inst.root, inst.store = root, tmp_path / "appyc" / "triton_key.json"
    return inst


def test_the_hash_is_computed_once_and_handed_back_to_later_processes(installation):
    key = installation.remember()
    assert key() == key() == installation.answer
    assert installation.calls == 1
    assert list(json.loads(installation.store.read_text()).values()) == [installation.answer]
    # A later process: the stored answer, Triton's hash never runs.
    key = installation.remember()
    assert key() == installation.answer
    assert installation.calls == 1


@pytest.mark.parametrize("changed", ["_C/libtriton.so", "__init__.py", "language/core.py",
                                     "backends/nvidia/driver.py"])
def test_a_changed_file_of_the_installation_computes_the_hash_again(installation, changed):
    installation.remember()()
    file = installation.root / changed
    file.write_text(file.read_text() + "# changed\n")
    installation.answer = "3.6.0-hash-after-the-change"
    assert installation.remember()() == "3.6.0-hash-after-the-change"
    assert installation.calls == 2
    # Both installations stay in the store (two environments may share one cache).
    assert len(json.loads(installation.store.read_text())) == 2


def test_bytecode_caches_do_not_count(installation):
    installation.remember()()
    pycache = installation.root / "runtime" / "__pycache__"
    pycache.mkdir()
    (pycache / "cache.cpython-312.pyc").write_bytes(b"\0")
    installation.remember()()
    assert installation.calls == 1


def test_turned_off_by_the_environment(installation, monkeypatch):
    monkeypatch.setenv("APPYC_TRITON_KEY_CACHE", "0")
    installation.remember()()
    installation.remember()()
    assert installation.calls == 2
    assert not installation.store.exists()


def test_an_unwritable_cache_still_answers(installation, monkeypatch, tmp_path):
    blocker = tmp_path / "not_a_directory"
    blocker.write_text("")
    monkeypatch.setenv("APPYC_CACHE_DIR", str(blocker))
    assert installation.remember()() == installation.answer
    assert installation.remember()() == installation.answer
    assert installation.calls == 2


def test_the_module_patches_triton_once(installation):
    first = installation.remember()
    before = installation.calls
    # A second appyc module imported into the same process leaves the memo in place.
    installation_module = importlib.util.module_from_spec(
        importlib.util.spec_from_file_location("again", first.__code__.co_filename))
    assert os.path.exists(first.__code__.co_filename)
    installation_module.__spec__.loader.exec_module(installation_module)
    installation_module._appyc_remember_triton_key()
    assert cache.triton_key is first
    assert installation.calls == before


REAL_TRITON = """
import importlib.util, json, os, sys
from triton.runtime import cache
spec = importlib.util.spec_from_file_location("m", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)  # not under the interpreter: the import installs the memo
assert getattr(cache.triton_key, "_appyc", False), "the import did not install the memo"
print(json.dumps({"memo": cache.triton_key(), "triton": cache.triton_key.uncached()}))
"""


def test_the_real_triton_gets_its_own_answer_back_in_a_later_process(tmp_path):
    """Against the installed Triton: a first process stores the hash, a second hands it back,
    and both equal what Triton itself computes in that process."""
    import subprocess
    import sys

    path = compile_sample("vector_add", tmp_path)
    env = dict(os.environ, APPYC_CACHE_DIR=str(tmp_path / "appyc"))
    env.pop("TRITON_INTERPRET", None)
    env.pop("APPYC_TRITON_KEY_CACHE", None)
    script = tmp_path / "real_triton.py"
    script.write_text(REAL_TRITON)
    answers = []
    for _ in range(2):
        out = subprocess.run([sys.executable, str(script), str(path)], env=env, text=True,
                             capture_output=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        answers.append(json.loads(out.stdout.strip().splitlines()[-1]))
        assert (tmp_path / "appyc" / "triton_key.json").exists()
    for answer in answers:
        assert answer["memo"] == answer["triton"]
    assert answers[0]["memo"].startswith(__import__("triton").__version__)
