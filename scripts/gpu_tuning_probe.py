#!/usr/bin/env python3
"""Where tuning picks wrong: for go_fast (NPBench `paper`, N = 12500), each kernel's tuned choice
next to the steady-state time of every candidate configuration. A measurement, not a test.

    python3 scripts/gpu_tuning_probe.py gen_npbench/go_fast.py      # on the GPU
"""
import importlib.util
import sys
import time

import numpy as np
import torch


def ms(fn, reps=20):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(1000 * (time.perf_counter() - t))
    return sorted(times)[len(times) // 2]


def main(path):
    spec = importlib.util.spec_from_file_location("probe", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    n = 12500
    a = torch.from_numpy(np.random.default_rng(1).random((n, n))).cuda()
    print("whole function:", f"{ms(lambda: mod.go_fast(a)):.3f} ms")
    for k in ("_go_fast_kernel0", "_go_fast_kernel1"):
        print(k, "tuned:", getattr(mod, f"{k}_tuning").chosen)
    trace = torch.zeros(1, dtype=torch.float64, device="cuda")
    out = torch.empty_like(a)
    for config in mod._APPYC_CANDIDATES:
        t0 = ms(lambda: mod._launch_go_fast_kernel0(trace, a, n, config))
        t1 = ms(lambda: mod._launch_go_fast_kernel1(out, a, trace, n, config))
        print(f"{config}: kernel0 {t0:.3f} ms, kernel1 {t1:.3f} ms", flush=True)
    print("whole function again:", f"{ms(lambda: mod.go_fast(a)):.3f} ms")


if __name__ == "__main__":
    main(sys.argv[1])
