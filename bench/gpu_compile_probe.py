#!/usr/bin/env python3
"""Where a cold first call's time goes, and whether compiling the tuning candidates on threads
helps: every candidate configuration of one persistent kernel (samples/natural_loops.py's
yee_natural, fdtd_2d at paper size) compiled without running, one after another or on a pool
of threads, each mode in a fresh process with empty Triton and appyc caches.

  python3 bench/gpu_compile_probe.py --module gen_natural/natural_loops.py
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time


def child(module, mode, threads):
    import numpy as np
    import torch
    spec = importlib.util.spec_from_file_location("nl", module)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    local = threading.local()
    real = mod._appyc_launch

    def launch(kernel, grid, args, constants, **options):
        if getattr(local, "compile_only", False):
            kernel.warmup(*args, grid=grid, **constants, **options)
            return
        real(kernel, grid, args, constants, **options)
    mod._appyc_launch = launch
    rng = np.random.default_rng(0)
    dev = "cuda"
    ex, ey, hz = (torch.tensor(rng.random((1000, 1200)), device=dev) for _ in range(3))
    fict = torch.tensor(rng.random(500), device=dev)
    tuning = mod._yee_natural_persistent0_tuning
    configs = [tuning.default] + [c for c in tuning.candidates if c != tuning.default]

    def compile_one(config):
        local.compile_only = True
        t0 = time.perf_counter()
        mod._launch_yee_natural_persistent0(ey, fict, hz, ex, 500, config)
        return time.perf_counter() - t0

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    if mode == "serial":
        each = [compile_one(c) for c in configs]
    else:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(threads) as pool:
            each = list(pool.map(compile_one, configs))
    total = time.perf_counter() - t0
    # One real launch of the default afterwards, to be sure the compiled kernels run.
    local.compile_only = False
    t1 = time.perf_counter()
    mod._launch_yee_natural_persistent0(ey, fict, hz, ex, 500, tuning.default)
    torch.cuda.synchronize()
    print(json.dumps(dict(mode=mode, threads=threads, configs=len(configs), total_s=total,
                          each_s=each, first_run_s=time.perf_counter() - t1)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", required=True)
    ap.add_argument("--child", nargs=2)
    a = ap.parse_args()
    if a.child:
        child(a.module, a.child[0], int(a.child[1]))
        return
    for mode, threads in [("serial", 1), ("threads", 4), ("threads", 8), ("serial", 1)]:
        env = dict(os.environ, TRITON_CACHE_DIR=tempfile.mkdtemp(),
                   APPYC_CACHE_DIR=tempfile.mkdtemp())
        r = subprocess.run([sys.executable, __file__, "--module", a.module, "--child", mode,
                            str(threads)], env=env, capture_output=True, text=True, timeout=300)
        print(r.stdout.strip() or r.stderr[-2000:], flush=True)


if __name__ == "__main__":
    main()
