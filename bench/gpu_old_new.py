#!/usr/bin/env python3
"""Issue 23, "nothing in the existing table gets slower": two builds of the same kernels (module
directories from `bench_npbench.py --generate` with two compilers) in ONE process, their calls
alternating in rounds, timed as scripts/bench_npbench.py times a call (restore the written
arrays, synchronise, call, synchronise).

Why: §60 and stop 43 compared the ours set before issue 23 and after it in separate fresh
processes, where calls of 0.1-0.2 ms move 10-30 % from process to process (§64); in one process
that spread is common to both builds. Each build tunes into an empty cache of its own and
settles first, as the benchmark lets it; one call of each on the same inputs is compared with
the other (NPBench's rule), and a disagreement fails the run.

    python bench/gpu_old_new.py --old DIR --new DIR --only symm,softmax --out DIR
    python bench/gpu_old_new.py ... --only gesummv --pin _gesummv_kernel0=1024,8   (both builds
        run that configuration: what the kernels' text costs, apart from what the tuner picked)
"""
import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "scripts"), str(Path.cwd() / "scripts")]
import bench_npbench as nb  # noqa: E402

BUILDS = ("old", "new")


class Pinned(dict):
    """A tuning table that holds one configuration for every key (`--pin`)."""

    def __init__(self, config):
        super().__init__()
        self.config = config

    def get(self, key, default=None):
        return self.config


def compare(kernel, a, say):
    import numpy as np
    name = nb.split_case(kernel)[1]  # "gemver.natural": the natural set's gemver
    spec = nb.KERNELS[name]
    be = nb.Backend("appyc", a.device)
    if a.device == "cpu":
        nb.interpret_floats_as_gpu()
    dirs = {"old": a.old, "new": a.new}
    mods = {b: nb.load_appyc_module(dirs[b], kernel, "appyc", prefix=f"{b}_{kernel}") for b in BUILDS}
    for b, m in mods.items():
        for kernel_fn, config in a.pin:
            getattr(m, f"{kernel_fn}_tuning").chosen = Pinned(config)
    fns = {b: getattr(m, name) for b, m in mods.items()}
    args = nb.make_inputs(name, a.size)
    names = [n for n, _ in args]
    arr_names = [n for n, v in args if isinstance(v, np.ndarray)]
    dev = {n: (be.up(v) if n in arr_names else v) for n, v in args}
    pristine = {n: be.up(dict(args)[n].copy()) for n in spec["writes"]}
    caches = {b: tempfile.mkdtemp(prefix=f"appyc_{b}_") for b in BUILDS}

    def once(build):
        for n, src in pristine.items():
            be.restore(dev[n], src)
        os.environ["APPYC_CACHE_DIR"] = caches[build]
        be.sync()
        t = time.perf_counter()
        ret = fns[build](*[dev[n] for n in names])
        be.sync()
        return time.perf_counter() - t, ret

    settle = {}
    for b in BUILDS:
        once(b)
        settle[b] = nb.settle_tuning(mods[b], lambda: once(b))
    outs = {}
    for b in BUILDS:
        _, ret = once(b)
        rets = () if ret is None else (tuple(ret) if isinstance(ret, (tuple, list)) else (ret,))
        outs[b] = [np.array(be.down(v), copy=True) for v in [dev[n] for n in spec["writes"]] + list(rets)]
    agree = len(outs["old"]) == len(outs["new"]) and all(
        w.shape == g.shape and (np.allclose(g, w, rtol=nb.RTOL, atol=nb.ATOL)
                                or float(np.linalg.norm(g - w)) / (float(np.linalg.norm(w)) or 1.0) < nb.L2TOL)
        for w, g in zip(outs["old"], outs["new"]))
    for _ in range(3):
        for b in BUILDS:
            once(b)
    warm = max(once(b)[0] for b in BUILDS)
    per_round = max(1, min(a.max_reps, int(a.time_budget / max(warm, 1e-6))) // a.rounds)
    times = {b: [] for b in BUILDS}
    if a.back_to_back:
        import torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def burst(build):
        """`per_round` calls queued back to back, their mean (the kernels without the host's
        synchronised call around them; the written arrays are not restored between calls)."""
        os.environ["APPYC_CACHE_DIR"] = caches[build]
        start.record()
        for _ in range(per_round):
            fns[build](*[dev[n] for n in names])
        end.record()
        end.synchronize()
        return [start.elapsed_time(end) / 1e3 / per_round]

    for r in range(a.rounds):
        for b in (BUILDS if r % 2 == 0 else BUILDS[::-1]):
            times[b] += burst(b) if a.back_to_back else [once(b)[0] for _ in range(per_round)]
    res = {"kernel": kernel, "agree": agree, "settle_calls": settle, "pinned": a.pin,
           "back_to_back": a.back_to_back,
           "tuning": {b: nb.tuning_choices(mods[b]) for b in BUILDS}}
    for b in BUILDS:
        ts = sorted(times[b])
        res[b] = {"ms": 1e3 * ts[len(ts) // 2], "min_ms": 1e3 * ts[0], "reps": len(ts)}
    res["new_over_old"] = res["new"]["ms"] / res["old"]["ms"]
    say(f"{kernel:15s} old {res['old']['ms']:.4f} ms, new {res['new']['ms']:.4f} ms: new/old "
        f"{res['new_over_old']:.3f} ({res['new']['reps']} calls each; outputs {'agree' if agree else 'DIFFER'})")
    return res


def main(a):
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "old_new.log", "a")

    def say(text):
        print(text, flush=True)
        log.write(text + "\n")
        log.flush()

    if a.device == "cuda":
        import torch
        say(f"device {torch.cuda.get_device_name()}; old {a.old}, new {a.new}; {a.rounds} rounds")
    results, deadline = [], time.perf_counter() + a.deadline
    for kernel in a.only:
        if time.perf_counter() > deadline:
            say(f"{kernel}: skipped (past --deadline)")
            continue
        results.append(compare(kernel, a, say))
    (out / "old_new.json").write_text(json.dumps(results, indent=1, default=str))
    if not all(r["agree"] for r in results):
        sys.exit(1)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", required=True)
    p.add_argument("--new", required=True)
    p.add_argument("--only", type=lambda s: s.split(","), required=True, help="cases: ours-set kernels, or KERNEL.natural")
    p.add_argument("--size", default="paper")
    p.add_argument("--device", default="cuda")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--time-budget", type=float, default=2.0, help="seconds of calls a build")
    p.add_argument("--max-reps", type=int, default=2000)
    p.add_argument("--deadline", type=float, default=300.0)
    p.add_argument("--out", default="old_new_out")
    p.add_argument("--back-to-back", action="store_true",
                   help="time each round's calls queued back to back (CUDA events), not one by one")
    p.add_argument("--pin", action="append", default=[],
                   type=lambda s: (s.split("=")[0], tuple(int(v) for v in s.split("=")[1].split(","))),
                   help="KERNEL_FN=MVL,WARPS[,...]: both builds run this configuration of that kernel")
    main(p.parse_args())
