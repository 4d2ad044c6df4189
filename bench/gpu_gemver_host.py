#!/usr/bin/env python3
"""Issue 23, gemver (natural) at the `paper` size on one GPU: how much of a call's wall time, as
scripts/bench_npbench.py measures it (restore, synchronise, call, synchronise), a cheaper host
path could take back. §59 found the two kernels at 0.540 ms of GPU time and the call at 0.600 ms
on an H100; the natural table of §63 had 0.638 ms on another H100 host, against JAX's 0.701.

Paths timed the same way, interleaved, three rounds, every one checked against NumPy first:
- call:       the generated function (what users run);
- launchers:  its two launchers with their configurations given (no tuning key, no table);
- runs:       the two compiled kernels' own launchers (Triton's C path) with argument tuples
              built once: the floor of any Python launcher;
- torch:      one small torch kernel (torch's C++ launch path): the platform's floor;
- nothing:    synchronise alone.
Then the same paths back to back (no synchronise between calls): the host cost per call when
the GPU's queue hides it.

    python bench/gpu_gemver_host.py --modules DIR --out $OUT    (DIR from bench_npbench --generate)
"""
import argparse
import importlib.util
import json
import statistics
import time
from pathlib import Path


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class GemverCase:
    """gemver (natural) at N = 8000 on the GPU: fixed random inputs, the arrays the call writes
    kept for `restore`, and `error` of the device arrays against NumPy's result (A's largest
    difference, x's and w's relative to their largest element). gpu_gemver_k1_calls.py uses
    it too."""

    def __init__(self, N=8000, seed=7):
        import numpy as np
        import torch
        rng = np.random.default_rng(seed)
        self.N, self.alpha, self.beta = N, 1.5, 1.2
        host = {k: rng.random(N) for k in ("u1", "v1", "u2", "v2", "w", "x", "y", "z")}
        host["A"] = rng.random((N, N))
        self.dev = {k: torch.from_numpy(v).cuda() for k, v in host.items()}
        self.saved = {k: self.dev[k].clone() for k in ("A", "w", "x")}
        A = host["A"] + np.outer(host["u1"], host["v1"]) + np.outer(host["u2"], host["v2"])
        x = host["x"] + self.beta * (A.T @ host["y"]) + host["z"]
        self.expected = {"A": A, "x": x, "w": host["w"] + self.alpha * (A @ x)}

    def restore(self):
        for k, v in self.saved.items():
            self.dev[k].copy_(v)

    def error(self):
        import numpy as np
        got = {k: self.dev[k].cpu().numpy() for k in self.expected}
        want = self.expected
        return max(float(np.abs(got["A"] - want["A"]).max()),
                   *(float(np.abs(got[k] - want[k]).max() / np.abs(want[k]).max()) for k in ("x", "w")))


def main(args):
    import torch

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "gemver_host.log", "a")
    log.write(f"== --modules {args.modules} --tag {args.tag!r}\n")

    def say(text):
        print(text, flush=True)
        log.write(text + "\n")

    mod = load(Path(args.modules) / "natural" / "gemver.py", "gemver_natural")
    case = GemverCase()
    N, alpha, beta, dev, restore = case.N, case.alpha, case.beta, case.dev, case.restore

    def call():
        mod.gemver(alpha, beta, dev["A"], dev["u1"], dev["v1"], dev["u2"], dev["v2"], dev["w"], dev["x"],
                   dev["y"], dev["z"])

    # Settle the tuner (as the benchmark does before its steady state), then check once.
    for _ in range(args.settle):
        restore()
        call()
    torch.cuda.synchronize()
    c1 = next(iter(mod._gemver_kernel1_tuning.chosen.values()))
    c2 = next(iter(mod._gemver_kernel2_tuning.chosen.values()))

    def launchers():
        mod._launch_gemver_kernel1(dev["A"], dev["u1"], dev["v1"], dev["u2"], dev["v2"], dev["y"], dev["x"],
                                   dev["z"], N, beta, c1)
        mod._launch_gemver_kernel2(dev["A"], dev["x"], dev["w"], N, alpha, c2)

    # The compiled launchers and the arguments one call hands them.
    launches = []
    real_launch = mod._appyc_launch

    def record(kernel, grid, a, constants, **options):
        launches.append((kernel, tuple(grid), a, dict(constants), options))
        real_launch(kernel, grid, a, constants, **options)

    # Replayed launchers (`_appyc_replayed`) skip `_appyc_launch` once planned: record through
    # the launchers as written.
    wrapped = {n: getattr(mod, n) for n in ("_launch_gemver_kernel1", "_launch_gemver_kernel2")}
    for n, f in wrapped.items():
        setattr(mod, n, getattr(f, "__wrapped__", f))
    mod._appyc_launch = record
    restore()
    call()
    mod._appyc_launch = real_launch
    for n, f in wrapped.items():
        setattr(mod, n, f)
    prepared = []
    for kernel, grid, a, constants, options in launches:
        key = (torch.cuda.current_device(), *constants.values(), *options.items(), *mod._appyc_arg_classes(a))
        run, function, metadata, cnames = mod._APPYC_COMPILED[id(kernel)][1][key]
        g = grid + (1, 1)
        prepared.append((run, g[0], g[1], g[2], function, metadata, tuple(a) + tuple(constants[n] for n in cnames)))
    stream = torch._C._cuda_getCurrentRawStream(torch.cuda.current_device())

    def runs():
        for run, g0, g1, g2, function, metadata, full in prepared:
            run(g0, g1, g2, stream, function, metadata, None, None, None, *full)

    tiny = torch.zeros(1, device="cuda")

    def torch_small():
        tiny.add_(1.0)

    def nothing():
        pass

    # Every path that computes gemver against NumPy.
    checks = {}
    for name, fn in (("call", call), ("launchers", launchers), ("runs", runs)):
        restore()
        fn()
        torch.cuda.synchronize()
        err = case.error()
        checks[name] = err
        assert err < 1e-9, (name, err)
    say(f"device {torch.cuda.get_device_name()}; configurations k1 {c1} k2 {c2}; checks {checks}")

    def bench_style(fn, reps):
        samples = []
        for _ in range(reps):
            restore()
            torch.cuda.synchronize()
            t = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            samples.append((time.perf_counter() - t) * 1e3)
        return statistics.median(samples)

    def back_to_back(fn, reps):
        restore()
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        host_ms = (time.perf_counter() - t) * 1e3 / reps
        torch.cuda.synchronize()
        return host_ms, (time.perf_counter() - t) * 1e3 / reps

    paths = {"call": call, "launchers": launchers, "runs": runs, "torch": torch_small, "nothing": nothing}
    result = {"device": torch.cuda.get_device_name(), "configs": [list(c1), list(c2)], "checks": checks,
              "rounds": []}
    for r in range(args.rounds):
        row = {name: bench_style(fn, args.reps) for name, fn in paths.items()}
        result["rounds"].append(row)
        say(f"round {r}: bench-style ms " + ", ".join(f"{k} {v:.4f}" for k, v in row.items()))
    for name in ("call", "launchers", "runs"):
        host_ms, total_ms = back_to_back(paths[name], args.reps)
        result[f"back_to_back_{name}"] = [host_ms, total_ms]
        say(f"back to back {name}: host {host_ms * 1e3:.1f} us a call, {total_ms:.4f} ms a call in all")
    (out / f"gemver_host{args.tag}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modules", required=True)
    p.add_argument("--out", default="gemver_host_out")
    p.add_argument("--settle", type=int, default=12)
    p.add_argument("--reps", type=int, default=60)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tag", default="", help="suffix of the JSON's name (one folder, several runs)")
    main(p.parse_args())
