"""Every kernel the generated code launches must compile for an H100 (sm_90), not only run under
the interpreter, which does not type-check the way the real compiler does.

For each case (its first size only) the case's function is called once in a subprocess without
TRITON_INTERPRET (gpu_compile.py), where launches are intercepted: each kernel is compiled with
`triton.compile(..., target=GPUTarget("cuda", 90, 32))` using the signature, constexprs and
alignment attributes Triton's own binder derives from the actual arguments, once per tuning
config, i.e. for each MVL among its tuner's candidates: (128, 256, 512, 1024), or (32, 64, 128,
256) for a kernel with a row tile. No GPU is needed.

All selected cases run in one session fixture, split by sample over a few worker processes.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cases import CASES, Case
from test_samples import compile_sample

HERE = Path(__file__).resolve().parent
HELPER = HERE / "gpu_compile.py"
MVLS = {128, 256, 512, 1024}   # the MVLs of the generated modules' _APPYC_CANDIDATES
ROW_TILE_MVLS = {32, 64, 128, 256}  # launch.rs ROW_TILE_MVLS: kernels with a row tile
TEST_NAME = "test_kernels_compile_for_sm90"


def _selected_cases(session):
    ids = []
    for item in session.items:
        if getattr(item, "originalname", None) == TEST_NAME:
            case = item.callspec.params["case"]
            if case.id not in ids:
                ids.append(case.id)
    return ids


@pytest.fixture(scope="session")
def sm90_results(request, tmp_path_factory):
    """{case id: result} from gpu_compile.py, or {case id: {"worker_error": text}}."""
    work = tmp_path_factory.mktemp("gpu_compile")
    by_id = {c.id: c for c in CASES}
    results = {}

    # Compile each sample with appyc (shared cache with test_samples.py).
    modules, per_sample = {}, {}
    for cid in _selected_cases(request.session):
        sample = by_id[cid].sample
        if sample not in modules:
            try:
                modules[sample] = str(compile_sample(sample, work))
            except pytest.fail.Exception as exc:  # appyc failed: reported by each of its cases
                modules[sample] = exc
        if isinstance(modules[sample], str):
            per_sample.setdefault(sample, []).append(cid)
        else:
            results[cid] = {"worker_error": f"appyc failed:\n{modules[sample]}"}

    # Spread the samples over a few workers, largest first.
    n_workers = max(1, min(4, os.cpu_count() or 1, len(per_sample)))
    buckets = [[] for _ in range(n_workers)]
    for sample in sorted(per_sample, key=lambda s: -len(per_sample[s])):
        min(buckets, key=lambda b: sum(len(per_sample[s]) for s in b)).append(sample)

    # The modules' import memoizes Triton's installation hash in APPYC_CACHE_DIR: a private one.
    env = dict(os.environ, APPYC_TEST_DEVICE="cpu", APPYC_CACHE_DIR=str(work / "appyc-cache"))
    env.pop("TRITON_INTERPRET", None)
    procs = []
    for k, samples in enumerate(b for b in buckets if b):
        req, res = work / f"request{k}.json", work / f"result{k}.json"
        cids = [c for s in samples for c in per_sample[s]]
        req.write_text(json.dumps({"cases": cids, "modules": {s: modules[s] for s in samples}}))
        log = open(work / f"worker{k}.log", "w+")
        proc = subprocess.Popen([sys.executable, str(HELPER), str(req), str(res)], env=env,
                                cwd=str(HERE), stdout=log, stderr=subprocess.STDOUT)
        procs.append((proc, log, res, cids))

    deadline = time.monotonic() + 600
    for proc, log, res, cids in procs:
        try:
            rc = proc.wait(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        log.seek(0)
        output = log.read()[-8000:]
        log.close()
        if rc == 0 and res.exists():
            results.update(json.loads(res.read_text()))
        else:
            for cid in cids:
                results[cid] = {"worker_error": f"gpu_compile.py exited with {rc}:\n{output}"}
    return results


def _describe(rec):
    sig = ", ".join(f"{k}: {v}" for k, v in (rec.get("signature") or {}).items())
    return f"{rec['kernel']} (MVL={rec['mvl']}; {sig})"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_kernels_compile_for_sm90(case: Case, sm90_results):
    result = sm90_results.get(case.id)
    assert result is not None, f"{case.id}: no result from gpu_compile.py"
    if "worker_error" in result:
        pytest.fail(result["worker_error"], pytrace=False)
    if result["host_error"]:
        pytest.fail(f"{case.func} raised outside the kernels (no GPU, TRITON_INTERPRET unset):\n"
                    f"{result['host_error']}", pytrace=False)

    compiles = result["compiles"]
    if not case.expect_launch:
        assert not compiles, f"unexpected launches: {[r['kernel'] for r in compiles]}"
        return
    assert compiles, "no kernel was launched, so nothing was compiled for sm_90"

    failed = [r for r in compiles if not r["ok"]]
    if failed:
        seen, lines = set(), []
        for r in failed:
            if (r["kernel"], r["error"]) in seen:
                lines.append(f"--- {_describe(r)}: same error")
                continue
            seen.add((r["kernel"], r["error"]))
            lines.append(f"--- {_describe(r)}:\n{r['error']}")
        pytest.fail(f"{len(failed)} of {len(compiles)} kernel compiles for sm_90 failed:\n"
                    + "\n".join(lines), pytrace=False)

    # A 2-D blocked loop's Gluon kernel (the GPU's form of the twin the interpreter runs).
    for name in case.launches:
        if name.endswith("_blocked_twin"):
            gluon = name[:-len("twin")] + "gluon"
            assert any(gluon in r["kernel"] for r in compiles), \
                f"{gluon} was not compiled: {[r['kernel'] for r in compiles]}"

    # Autotuned kernels must have been compiled for every MVL candidate: the prelude's, or a
    # row tile's narrower set, as the module's tuner lists them.
    mvls = {}
    for r in compiles:
        if "MVL" in (r["signature"] or {}):
            mvls.setdefault(r["kernel"], set()).add(r["mvl"])
    tuned = result.get("candidates", {})
    expected = {k: set(tuned.get(k, MVLS)) for k in mvls}
    odd = {k: sorted(v) for k, v in expected.items() if v not in (MVLS, ROW_TILE_MVLS)}
    assert not odd, f"candidate MVLs other than {sorted(MVLS)} or {sorted(ROW_TILE_MVLS)}: {odd}"
    short = {k: sorted(v) for k, v in mvls.items() if not expected[k] <= v}
    assert not short, f"kernels not compiled for every candidate MVL: {short} (of {expected})"
