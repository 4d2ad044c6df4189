"""bench/gpu_tuner_check.py --interleave, the instrument of issue 23's tuner rule, on the CPU:
a trial's three builds run in one process and their outputs are compared, so a build that
computes something else is reported, never timed as if it were the same program."""
import json
import os
import subprocess
import sys

from test_npbench_math import B, REPO
from test_samples import appyc_bin


def compile_gemver(modules):
    """gemver (natural) and its --mvl 256 build where the check looks for them."""
    (modules / "natural").mkdir(parents=True)
    src = B.SET_DIRS["natural"] / "gemver.py"
    for stem, extra in (("gemver", []), ("gemver_mvl256", ["--mvl", "256"])):
        proc = subprocess.run([str(appyc_bin()), str(src), "-o", str(modules / "natural" / f"{stem}.py")]
                              + extra, capture_output=True, text=True, timeout=120, cwd=REPO)
        assert proc.returncode == 0, proc.stderr


def run_check(modules, out):
    env = {k: v for k, v in os.environ.items() if k not in ("APPYC_AUTOTUNE", "APPYC_MVL")}
    proc = subprocess.run(
        [sys.executable, "bench/gpu_tuner_check.py", "--modules", str(modules), "--device", "cpu",
         "--size", "small", "--set", "natural", "--only", "gemver", "--trials", "1", "--interleave",
         "--rounds", "1", "--max-reps", "2", "--time-budget", "0.001", "--warmup", "0",
         "--out", str(out)],
        capture_output=True, text=True, timeout=300, cwd=REPO, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads((out / "tuner_check.json").read_text())


def test_interleaved_trial_times_three_agreeing_builds(tmp_path):
    compile_gemver(tmp_path / "mods")
    rows = run_check(tmp_path / "mods", tmp_path / "out")
    assert sorted(r["build"] for r in rows) == ["appyc", "appyc_default", "appyc_mvl256"]
    for r in rows:
        assert r["status"] == "ok", r
        assert r["ms"] > 0 and r["reps"] >= 1, r
        assert r["agree"] is True, r


def test_interleaved_trial_reports_a_build_that_computes_something_else(tmp_path):
    mods = tmp_path / "mods"
    compile_gemver(mods)
    path = mods / "natural" / "gemver_mvl256.py"
    text = path.read_text()
    wrong = text.replace("+ alpha * s)", "+ 2 * alpha * s)")
    assert wrong != text, "the mutation no longer applies: update it"
    path.write_text(wrong)
    rows = run_check(mods, tmp_path / "out")
    assert all(r["agree"] is False for r in rows), rows
    assert "appyc_mvl256" in rows[0]["disagree"] and "appyc_default" not in rows[0]["disagree"]
    assert "outputs differ" in (tmp_path / "out" / "tuner_check.md").read_text()


def test_bench_refs_first_finishes_references_before_timing(tmp_path):
    """bench_npbench --refs-first: the references' line comes before the first timed case, and
    the table says the references did not run beside the cases."""
    modules = tmp_path / "mods"
    compile_gemver(modules)
    out = tmp_path / "t.md"
    proc = subprocess.run(
        [sys.executable, "scripts/bench_npbench.py", "--device", "cpu", "--modules", str(modules),
         "--set", "natural", "--only", "gemver", "--impls", "appyc", "--refs-first",
         "--no-limits", "--max-reps", "2", "--time-budget", "0.001", "--warmup", "0",
         "--out", str(out)],
        capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    done = next(i for i, ln in enumerate(lines) if "references done; timing starts" in ln)
    reference = next(i for i, ln in enumerate(lines) if "reference gemver.natural: NumPy" in ln)
    case = next(i for i, ln in enumerate(lines) if "gemver (natural)" in ln and " ok " in ln)
    assert reference < done < case
    assert "before any case was timed" in out.read_text()
    assert json.loads(out.with_suffix(".json").read_text())["meta"]["refs_first"] is True
