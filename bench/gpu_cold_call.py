"""Where a cold first call's time goes (issue 23, item 5: at most 2 s with empty caches).

Each case runs in a fresh process with empty APPYC_CACHE_DIR and TRITON_CACHE_DIR, as
bench_npbench.py's `first s` does (module imported, inputs on the device and the CUDA context
made before the clock starts). The module is imported --settle seconds before the call (a user's own work in between; 0: the
call follows the import at once); `import+first` is the import and the call without that pause.
The first call is timed with Triton's pieces wrapped:
`triton.compile` (per kernel, and per stage: ttir/ttgir/llir/ptx/cubin), the C compiler runs
that build Triton's `cuda_utils` and each kernel's launcher (`triton.runtime.build._build`), and
the generated module's tuner (`_appyc_tune_step`/`_appyc_fastest`). A second call in the same
process gives the run's own time. With --profile the first call's cProfile top lines come too.

    python3 bench/gpu_cold_call.py --modules DIR --out $OUT [--only a,b.natural] [--profile]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"

CASE = r'''
import cProfile, importlib.util, io, json, pstats, sys, time
sys.path.insert(0, {scripts!r})
import numpy as np, torch
import bench_npbench as bn
events = []
args = bn.make_inputs({kernel!r}, "paper")
torch.zeros(1, device="cuda"); torch.cuda.synchronize()
dev = [torch.from_numpy(v).cuda() if isinstance(v, np.ndarray) else v for _, v in args]
torch.cuda.synchronize()
t_import = time.perf_counter()
spec = importlib.util.spec_from_file_location("m", {path!r})
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
import_s = time.perf_counter() - t_import
time.sleep({settle!r})  # what a user's own work between import and call would take

def timed(kind, name, fn):
    def wrapper(*a, **k):
        t0 = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            events.append((kind, name(a, k), time.perf_counter() - t0))
    return wrapper

import triton.runtime.build as build
build._build = timed("cc", lambda a, k: a[0], build._build)
from triton.backends.nvidia.compiler import CUDABackend
_add = CUDABackend.add_stages
def add_stages(self, stages, options, language):
    _add(self, stages, options, language)
    for st in list(stages):
        stages[st] = timed("stage", lambda a, k, st=st: st, stages[st])
CUDABackend.add_stages = add_stages
from triton.compiler.compiler import ASTSource
from triton.experimental.gluon._runtime import GluonASTSource
for cls in (ASTSource, GluonASTSource):
    cls.make_ir = timed("make_ir", lambda a, k: a[0].name, cls.make_ir)
import triton.compiler.compiler as cc
import triton.runtime.jit as jit
_compile = cc.compile
def compile_(src, *a, **k):
    return timed("compile", lambda a_, k_: getattr(src, "name", None) or getattr(getattr(src, "fn", None), "__name__", "?"), _compile)(src, *a, **k)
cc.compile = compile_
for name in ("_appyc_tune_step", "_appyc_fastest"):
    if hasattr(mod, name):
        setattr(mod, name, timed("tune", lambda a, k, n=name: n, getattr(mod, name)))
fn = getattr(mod, {kernel!r})
prof = cProfile.Profile() if {profile!r} else None
t0 = time.perf_counter()
if prof: prof.enable()
fn(*dev); torch.cuda.synchronize()
if prof: prof.disable()
first = time.perf_counter() - t0
from_import = time.perf_counter() - t_import - {settle!r}
t0 = time.perf_counter()
fn(*dev); torch.cuda.synchronize()
second = time.perf_counter() - t0
top = ""
if prof:
    s = io.StringIO(); pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(30); top = s.getvalue()
print("RESULT " + json.dumps({{"first_s": first, "second_s": second, "import_s": import_s, "from_import_s": from_import, "events": events, "top": top}}))
'''


def run_case(case, modules, profile, timeout, settle=1.0, env_extra=()):
    st, _, _ = case.partition(".")
    kernel, _, st = case.partition(".")
    st = st or "ours"
    path = Path(modules) / (f"{kernel}.py" if st == "ours" else f"{st}/{kernel}.py")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, APPYC_CACHE_DIR=f"{tmp}/appyc", TRITON_CACHE_DIR=f"{tmp}/triton",
                   PYTHONUNBUFFERED="1", **dict(env_extra))
        src = CASE.format(scripts=str(SCRIPTS), path=str(path.resolve()), kernel=kernel,
                          profile=profile, settle=settle)
        t0 = time.perf_counter()
        try:
            p = subprocess.run([sys.executable, "-c", src], env=env, capture_output=True,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"case": case, "status": "timeout"}
        wall = time.perf_counter() - t0
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            res = json.loads(line[7:])
            res.update(case=case, status="ok", process_s=wall, stderr=p.stderr[-2000:])
            return res
    return {"case": case, "status": "failed", "stderr": p.stderr[-4000:]}


def summary(res):
    ev = res["events"]
    def total(kind):
        return sum(s for k, _, s in ev if k == kind)
    compiles = [(n, round(s, 2)) for k, n, s in ev if k == "compile"]
    stages = {}
    for k, n, s in ev:
        if k == "stage":
            stages[n] = stages.get(n, 0.0) + s
    cc = [(Path(n).name, round(s, 2)) for k, n, s in ev if k == "cc"]
    return (f"{res['case']:<22} first {res['first_s']:.2f} s  import+first {res['from_import_s']:.2f} s  "
            f"run {res['second_s']:.3f} s  make_ir {total('make_ir'):.2f} s  "
            f"compile {total('compile'):.2f} s {compiles}  stages "
            f"{ {k: round(v, 2) for k, v in stages.items()} }  cc {total('cc'):.2f} s {cc}  "
            f"tune {total('tune'):.2f} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modules", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", type=lambda s: s.split(","))
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--tag", default="cold")
    ap.add_argument("--settle", type=float, default=1.0,
                    help="seconds between the module's import and the first call (0: at once)")
    ap.add_argument("--env", action="append", default=[], metavar="K=V",
                    help="environment of the case processes (APPYC_PREWARM=0)")
    a = ap.parse_args()
    sys.path.insert(0, str(SCRIPTS))
    import bench_npbench as bn
    cases = a.only or bn.all_cases()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for case in cases:
        res = run_case(case, a.modules, a.profile, a.timeout, a.settle,
                       [kv.split("=", 1) for kv in a.env])
        results.append(res)
        if res["status"] == "ok":
            print(summary(res), flush=True)
            if a.profile:
                print(res["top"], flush=True)
        else:
            print(f"{case:<22} {res['status']}: {res.get('stderr', '')[-1500:]}", flush=True)
        (out / f"cold_call_{a.tag}.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
