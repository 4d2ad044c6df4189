#!/usr/bin/env python3
"""Issue 23 item 4: does a kernel's tuned configuration lose to its default in the steady state,
and which kernel's choice is it? For each --kernels case (both sources: scripts/npbench/ and
scripts/npbench_natural/, compiled into --modules), in each of --procs fresh processes (own
APPYC_CACHE_DIR, shared Triton cache): call the function at the `paper` size until every
tuning table of the module is settled (the tuner's verdicts recorded: the configurations timed,
the choice, the median ratio to the default), then time whole calls (wall between
synchronisations, written arrays restored before each, median of --calls, as
scripts/bench_npbench.py times the steady state) with every table's choice, with every table
on its default, and with one table at a time on its default, in interleaved rounds.

    python bench/gpu_tuner_interleaved.py --modules DIR --kernels gemver --out $OUT   (GPU machine)
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def child(args):
    import torch

    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_npbench as nb

    out = {}
    for kernel in args.kernels.split(","):
        for label, rel in (("ours", f"{kernel}.py"), ("natural", f"natural/{kernel}.py")):
            if not (Path(args.modules) / rel).exists():
                continue
            mod = load(Path(args.modules) / rel, f"{kernel}_{label}")
            tables = {n: t for n, t in vars(mod).items() if isinstance(t, mod._AppycTuning)}
            inputs = nb.make_inputs(kernel, "paper")
            values = [torch.from_numpy(v).cuda() if hasattr(v, "shape") else v for _, v in inputs]
            names = [n for n, _ in inputs]
            written = [values[names.index(w)] for w in nb.KERNELS[kernel]["writes"]]
            saved = [w.clone() for w in written]
            verdicts = []
            original = mod._appyc_fastest

            def fastest(name, candidates, default, w, launch, original=original, verdicts=verdicts):
                choice = original(name, candidates, default, w, launch)
                verdicts.append({"kernel": name, "tried": [list(c) for c in candidates], "chose": list(choice)})
                return choice

            mod._appyc_fastest = fastest
            fn = getattr(mod, kernel)

            def call():
                for w, s in zip(written, saved):
                    w.copy_(s)
                fn(*values)

            calls = 0
            while calls < 60 and (not all(t.chosen for t in tables.values()) or any(t.pending for t in tables.values())):
                call()
                calls += 1
            torch.cuda.synchronize()
            chosen = {n: dict(t.chosen) for n, t in tables.items()}

            def setting(defaults):
                for n, t in tables.items():
                    t.chosen.update({k: (t.default if n in defaults else c) for k, c in chosen[n].items()})

            settings = {"tuned": (), "all default": tuple(tables)}
            settings.update({f"{n[1:-7]} default": (n,) for n in tables})
            wall = {s: [] for s in settings}
            for _ in range(args.rounds):
                for s, defaults in settings.items():
                    setting(defaults)
                    for _ in range(args.calls):
                        for w, v in zip(written, saved):
                            w.copy_(v)
                        torch.cuda.synchronize()
                        t0 = time.perf_counter()
                        fn(*values)
                        torch.cuda.synchronize()
                        wall[s].append(1e3 * (time.perf_counter() - t0))
            out[f"{kernel} ({label})"] = {
                "tuning_calls": calls, "verdicts": verdicts,
                "chosen": {n: {repr(k): list(c) for k, c in ch.items()} for n, ch in chosen.items()},
                "defaults": {n: list(t.default) for n, t in tables.items()},
                "wall_ms": {s: statistics.median(v) for s, v in wall.items()}}
    print("RESULT " + json.dumps(out), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modules", required=True)
    ap.add_argument("--kernels", default="gemver")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--procs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    if args.child:
        return child(args)
    results = []
    triton_cache = tempfile.mkdtemp()
    for p in range(args.procs):
        env = dict(os.environ, APPYC_CACHE_DIR=tempfile.mkdtemp(), TRITON_CACHE_DIR=triton_cache)
        run = subprocess.run([sys.executable, __file__, "--child", "--modules", args.modules, "--kernels",
                              args.kernels, "--rounds", str(args.rounds), "--calls", str(args.calls)],
                             env=env, capture_output=True, text=True, timeout=300)
        line = next((ln for ln in run.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if line is None:
            print(run.stdout[-2000:], run.stderr[-3000:], flush=True)
            continue
        r = json.loads(line[7:])
        results.append(r)
        for case, v in r.items():
            print(f"process {p} {case}: {v['tuning_calls']} calls; chosen {v['chosen']}; defaults {v['defaults']}")
            for verdict in v["verdicts"]:
                print(f"    tuner {verdict}")
            base = v["wall_ms"]["tuned"]
            print("    " + "; ".join(f"{s} {ms:.4f} ms ({ms / base:.3f})" for s, ms in v["wall_ms"].items()), flush=True)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "tuner_interleaved.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
