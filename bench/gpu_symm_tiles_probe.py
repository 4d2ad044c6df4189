"""Issue 23, symm: does any tile configuration of appyc's generated symm kernel (the natural
source's `_symm_kernel0_tiles`, passes/gather.rs + passes/tile_dot.rs: fp64 `tl.dot` tiles)
beat torch.compile's 0.118-0.125 ms (cuBLAS DGEMM plus elementwise work) at the `paper` size?

Times the tile kernel alone at each configuration (BI, BJ, BK, warps, stages) through the
generated module's own launcher, the whole function at the tuner's candidates, `C *= beta` alone
(the host line before the kernel) and torch's DGEMM of the same shape for scale; checks each
configuration's result against the default's.

    python bench/gpu_symm_tiles_probe.py --module .devcarry/symm/symm.py --out $OUT
"""
import argparse
import importlib.util
import itertools
import json
import os
import statistics

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", default=".devcarry/symm/symm.py")
    ap.add_argument("--out", default="/tmp/symm")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    log_f = open(os.path.join(a.out, "symm_tiles_probe.log"), "a")

    def log(*x):
        s = " ".join(str(y) for y in x)
        print(s, flush=True)
        log_f.write(s + "\n")

    import torch

    spec = importlib.util.spec_from_file_location("symm_gen", a.module)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    M, N = 1000, 1200
    rng = np.random.default_rng(3)
    C0 = torch.tensor(rng.random((M, N)), device="cuda")
    A = torch.tensor(rng.random((M, M)), device="cuda")
    B = torch.tensor(rng.random((M, N)), device="cuda")
    alpha, beta = 1.5, 1.2
    C = C0.clone()

    def timed(fn, reps=30):
        ts = []
        for _ in range(reps):
            C.copy_(C0)
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            fn()
            e1.record()
            e1.synchronize()
            ts.append(e0.elapsed_time(e1))
        return statistics.median(ts)

    log(f"# {torch.cuda.get_device_name(0)}")
    log(f"C *= beta alone: {timed(lambda: C.mul_(beta)) * 1e3:.1f} us")
    S = torch.tril(A) + torch.tril(A, -1).T
    log(f"torch DGEMM {M}x{M} @ {M}x{N}: {timed(lambda: torch.matmul(S, B)) * 1e3:.1f} us")
    default = mod._symm_kernel0_tiles_tuning.default
    C.copy_(C0)
    mod._launch_symm_kernel0_tiles(B, A, C, alpha, M, N, default)
    ref = C.clone()
    rows = []
    import time
    start = time.time()
    tiles = ((32, 32), (32, 64), (64, 32), (64, 64), (128, 64), (64, 128))
    for (bi, bj), bk, warps, stages in itertools.product(tiles, (8, 16, 32), (2, 4, 8), (2, 3, 4)):
        if bi * bj // (32 * warps) < 4 or bi * bj // (32 * warps) > 64:
            continue
        if time.time() - start > 380:
            log(f"deadline: {(bi, bj, bk, warps, stages)} and later not run")
            break
        cfg = (bi, bj, bk, warps, stages)
        try:
            ms = timed(lambda: mod._launch_symm_kernel0_tiles(B, A, C, alpha, M, N, cfg))
            C.copy_(C0)
            mod._launch_symm_kernel0_tiles(B, A, C, alpha, M, N, cfg)
            d = float((C - ref).abs().max() / ref.abs().max())
        except Exception as e:  # a configuration that does not compile or launch
            log(f"{cfg}: FAILED {type(e).__name__}: {str(e)[:200]}")
            continue
        rows.append(dict(cfg=cfg, us=ms * 1e3, rel_diff=d))
        log(f"{cfg}: {ms * 1e3:.1f} us, rel diff vs default {d:.2g}")
    rows.sort(key=lambda r: r["us"])
    log("fastest:", [(r["cfg"], round(r["us"], 1)) for r in rows[:8]])
    log(f"default {default}: {[r['us'] for r in rows if tuple(r['cfg']) == tuple(default)]}")
    with open(os.path.join(a.out, "symm_tiles_probe.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
