#!/usr/bin/env python3
"""Issue 23, gemver: where the host time of a generated launcher goes. bench/gpu_gemver_probe.py
found the H100's launcher 1 spending 53 us and launcher 2 33 us of CPU before their kernels
start, where bench/gaps_h100.log had measured 14.5 us for a whole launcher. Each piece of
launcher 2's path timed alone (synchronised between samples, so the GPU's queue never blocks a
launch), then cProfile over both launchers.

    python bench/gpu_launch_profile.py --modules DIR --out $OUT
"""
import argparse
import cProfile
import importlib.util
import io
import pstats
import statistics
import time
from pathlib import Path


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(args):
    import torch

    log = open(Path(args.out) / "launch_profile.log", "a")

    def say(text):
        print(text, flush=True)
        log.write(text + "\n")

    mod = load(Path(args.modules) / "natural" / "gemver.py", "gemver_natural")
    N = 8000
    t = {k: torch.rand(N, dtype=torch.float64, device="cuda") for k in ("u1", "v1", "u2", "v2", "w", "x", "y", "z")}
    A = torch.rand(N, N, dtype=torch.float64, device="cuda")
    alpha, beta = 1.5, 1.2
    for _ in range(8):
        mod.gemver(alpha, beta, A, t["u1"], t["v1"], t["u2"], t["v2"], t["w"], t["x"], t["y"], t["z"])
    torch.cuda.synchronize()

    def timed(fn, reps=200):
        samples = []
        for _ in range(reps):
            torch.cuda.synchronize()
            s = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - s) * 1e6)
        return statistics.median(samples)

    kernel = mod._gemver_kernel2
    config = next(iter(mod._gemver_kernel2_tuning.chosen.values()))
    launch_args = (A, t["x"], t["w"], int(N), float(alpha), A.stride(0), A.stride(1), t["x"].stride(0), t["w"].stride(0))
    constants = {"MVL": config[0], "ONE_STRIP": False}
    _, known = mod._APPYC_COMPILED[id(kernel)]
    device = torch.cuda.current_device()
    key = (device, *constants.values(), ("num_warps", config[1]), *mod._appyc_arg_classes(launch_args))
    run, function, metadata, names = known[key]
    stream = torch._C._cuda_getCurrentRawStream(device)
    pieces = {
        "launcher 1 (whole)": lambda: mod._launch_gemver_kernel1(A, t["u1"], t["v1"], t["u2"], t["v2"], t["y"], t["x"], t["z"], N, beta),
        "launcher 2 (whole)": lambda: mod._launch_gemver_kernel2(A, t["x"], t["w"], N, alpha),
        "launcher 2 with its config": lambda: mod._launch_gemver_kernel2(A, t["x"], t["w"], N, alpha, config),
        "_appyc_launch of kernel 2": lambda: mod._appyc_launch(kernel, (N,), launch_args, constants, num_warps=config[1]),
        "tuning key + chosen.get": lambda: mod._gemver_kernel2_tuning.chosen.get((mod._appyc_size(N), A.dtype, t["x"].dtype, t["w"].dtype)),
        "args tuple": lambda: (A, t["x"], t["w"], int(N), float(alpha), A.stride(0), A.stride(1), t["x"].stride(0), t["w"].stride(0)),
        "_appyc_arg_classes": lambda: mod._appyc_arg_classes(launch_args),
        "_appyc_hooked": mod._appyc_hooked,
        "current_device": torch.cuda.current_device,
        "raw stream": lambda: torch._C._cuda_getCurrentRawStream(device),
        "run (Triton's launcher) alone": lambda: run(N, 1, 1, stream, function, metadata, None, None, None, *launch_args, *[constants[n] for n in names]),
        "torch.empty(1) on the device": lambda: torch.empty(1, device="cuda"),
        "nothing": lambda: None,
    }
    for round_ in range(2):
        for name, fn in pieces.items():
            say(f"round {round_} {name}: {timed(fn):.1f} us")
    say(f"Triton launcher type: {type(run).__module__}.{type(run).__name__}")
    profile = cProfile.Profile()
    for _ in range(300):
        torch.cuda.synchronize()
        profile.enable()
        pieces["launcher 1 (whole)"]()
        pieces["launcher 2 (whole)"]()
        profile.disable()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(25)
    say(text.getvalue())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--modules", required=True)
    parser.add_argument("--out", required=True)
    main(parser.parse_args())
