#!/usr/bin/env python3
"""Issue 23, symm (natural) against torch.compile: where a whole call's time goes. Its tile kernel
alone takes 0.099 ms on the H100 (performance.md 52) and torch.compile's whole call 0.12-0.14 ms,
yet the whole natural call took 0.14-0.22 ms. In one process, both symm sources' modules
(--modules DIR as bench_npbench.py --generate writes it) and torch.compile's symm (the bench's
own peer), every result checked against NumPy: the whole call timed as bench_npbench.py times it
(C restored, synchronise, call, synchronise; wall), the host part of it (wall until the call
returns), and each piece of the natural call on its own (`C *= beta`, the region's launcher, the
tile kernel's launcher with the tuned tile, an empty call), in interleaved rounds; then a
torch.profiler trace of a few calls of each whole call (kernels, their times and the gaps).

    python bench/gpu_symm_host.py --modules DIR [--modules-new DIR2] --out $OUT     (GPU machine)
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(args):
    import numpy as np
    import torch

    import bench_npbench as bn

    rng = np.random.default_rng(42)
    M, N = 1000, 1200
    alpha, beta = 1.5, 1.2
    C0n, An, Bn = rng.random((M, N)), rng.random((M, M)), rng.random((M, N))
    expected = alpha * (np.tril(An) + np.tril(An, -1).T) @ Bn + beta * C0n
    C0 = torch.from_numpy(C0n).cuda()
    A, B = torch.from_numpy(An).cuda(), torch.from_numpy(Bn).cuda()
    C = C0.clone()
    mods = {"ours": load(Path(args.modules) / "symm.py", "symm_ours"),
            "natural": load(Path(args.modules) / "natural" / "symm.py", "symm_natural")}
    if args.modules_new:
        mods["natural new"] = load(Path(args.modules_new) / "natural" / "symm.py", "symm_natural_new")
    compiled = bn.torch_impl("symm", compiled=True)
    calls = {name: (lambda m=m: m.symm(alpha, beta, C, A, B)) for name, m in mods.items()}
    calls["torch.compile"] = lambda: compiled(alpha, beta, C, A, B)
    out = {"device": torch.cuda.get_device_name(), "error": {}, "settle_calls": {}}
    for name, call in calls.items():  # settle tuning (and compile), then check
        mod = mods.get(name)
        tables = [] if mod is None else [t for t in vars(mod).values() if type(t).__name__ == "_AppycTuning"]
        n = 0
        while True:
            C.copy_(C0)
            call()
            n += 1
            if not any(t.pending for t in tables) or n > 100:
                break
        out["settle_calls"][name] = n
        C.copy_(C0)
        call()
        torch.cuda.synchronize()
        out["error"][name] = float(np.abs(C.cpu().numpy() - expected).max() / np.abs(expected).max())
        print(f"{name}: settled after {n} calls, relative error {out['error'][name]:.2e}", flush=True)
        assert out["error"][name] < 1e-12, name
    nat = mods["natural"]
    tile = next(iter(nat._symm_kernel0_tiles_tuning.chosen.values()))
    out["tile"] = list(tile)
    pieces = dict(calls)
    pieces["natural: C *= beta"] = lambda: C.mul_(beta)
    pieces["natural: region launcher"] = lambda: nat._launch_symm_kernel0(B, A, C, alpha)
    pieces["natural: tile launcher"] = lambda: nat._launch_symm_kernel0_tiles(B, A, C, alpha, M, N, tile)
    pieces["empty call"] = lambda: None
    wall = {k: [] for k in pieces}
    host = {k: [] for k in pieces}
    for rnd in range(args.rounds):
        for name, call in (pieces.items() if rnd % 2 == 0 else reversed(pieces.items())):
            for _ in range(args.calls):
                C.copy_(C0)
                torch.cuda.synchronize()
                s = time.perf_counter()
                call()
                h = time.perf_counter()
                torch.cuda.synchronize()
                e = time.perf_counter()
                wall[name].append(1e3 * (e - s))
                host[name].append(1e3 * (h - s))
    out["wall_ms"] = {k: statistics.median(v) for k, v in wall.items()}
    out["host_ms"] = {k: statistics.median(v) for k, v in host.items()}
    for k in pieces:
        print(f"{k:28} wall {out['wall_ms'][k]:.4f} ms   host {out['host_ms'][k]:.4f} ms", flush=True)
    # Where the host time goes: Python's profiler over calls of each appyc module.
    import cProfile
    import io
    import pstats
    out["hooked"] = nat._appyc_hooked()
    out["fast_launch_entries"] = {name: len(v[1]) for name, v in
                                  ((getattr(k, "__name__", str(k)), e) for k, e in
                                   ((e[0], e) for e in nat._APPYC_COMPILED.values()))}
    print("hooked:", out["hooked"], "fast-launch entries:", out["fast_launch_entries"], flush=True)
    out["profile"] = {}
    for name in mods:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(300):
            calls[name]()
        prof.disable()
        torch.cuda.synchronize()
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(18)
        out["profile"][name] = text.getvalue()
        print(f"profile {name} (300 calls):\n{text.getvalue()}", flush=True)
    out["trace"] = {}
    from torch.profiler import ProfilerActivity, profile
    for name, call in calls.items():
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                C.copy_(C0)
                torch.cuda.synchronize()
                call()
                torch.cuda.synchronize()
        events = [e for e in prof.events() if e.device_type.name == "CUDA"]
        kernels = {}
        for e in events:
            kernels.setdefault(e.name[:60], []).append(e.device_time_total / 1e3)
        out["trace"][name] = {k: [round(x, 4) for x in v] for k, v in kernels.items()}
        print(f"trace {name}:", {k: round(statistics.median(v), 4) for k, v in kernels.items()}, flush=True)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "symm_host.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modules", required=True)
    ap.add_argument("--modules-new", default="")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--calls", type=int, default=100)
    main(ap.parse_args())
