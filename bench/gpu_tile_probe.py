#!/usr/bin/env python3
"""Probe: what tile shapes make `tl.dot` fast for fp64 / fp32 (ieee) on this GPU.

A hand-written tiled matmul (written here from the math, C = A @ B) with a grid of output
tiles, a loop over k-blocks, masks on ragged edges, timed per configuration at NPBench's gemm
`paper` size (2000 x 2300 x 2600) and a syrk-like shape (1200 x 1200 x 1000), against
torch.matmul (cuBLAS) in the same process. Every result is checked against torch.matmul.
It decides the default tile shapes of appyc's tile lowering (passes/tile_dot.rs).

    python bench/gpu_tile_probe.py --out $OUT
"""
import argparse
import json
import time

import torch
import triton
import triton.language as tl


@triton.jit
def tiled_matmul(A, B, C, M, N, K, sam, sak, sbk, sbn, scm, scn,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, STAGES: tl.constexpr):
    pid_m = tl.program_id(1)
    pid_n = tl.program_id(0)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=C.dtype.element_ty)
    for k0 in tl.range(0, K, BK, num_stages=STAGES):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * sam + rk[None, :] * sak,
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(B + rk[:, None] * sbk + rn[None, :] * sbn,
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(C + rm[:, None] * scm + rn[None, :] * scn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def timed(fn, reps=20):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


CONFIGS = [
    (32, 32, 16, 2, 3), (64, 64, 16, 4, 3), (64, 64, 32, 4, 3), (64, 128, 16, 4, 3),
    (128, 64, 16, 4, 3), (128, 128, 16, 8, 3), (128, 128, 32, 8, 3), (64, 64, 16, 4, 4),
    (128, 64, 32, 4, 2), (64, 32, 32, 4, 3),
]


def probe(m, n, k, dtype, log):
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.rand(m, k, device="cuda", dtype=dtype, generator=g)
    b = torch.rand(k, n, device="cuda", dtype=dtype, generator=g)
    c = torch.empty(m, n, device="cuda", dtype=dtype)
    ref = a @ b
    flops = 2.0 * m * n * k
    t = timed(lambda: torch.matmul(a, b, out=c))
    rows = [{"impl": "torch.matmul", "ms": t * 1e3, "tflops": flops / t / 1e12}]
    for bm, bn, bk, warps, stages in CONFIGS:
        grid = (triton.cdiv(n, bn), triton.cdiv(m, bm))

        def run():
            tiled_matmul[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                               b.stride(1), c.stride(0), c.stride(1), BM=bm, BN=bn, BK=bk,
                               STAGES=stages, num_warps=warps)
        try:
            t0 = time.perf_counter()
            run()
            torch.cuda.synchronize()
            first = time.perf_counter() - t0
            err = ((c - ref).norm() / ref.norm()).item()
            t = timed(run)
            rows.append({"impl": f"tile {bm}x{bn}x{bk} w{warps} s{stages}", "ms": t * 1e3,
                         "tflops": flops / t / 1e12, "rel_err": err, "first_s": first})
        except Exception as e:  # a config the compiler rejects (shared memory) is a row
            rows.append({"impl": f"tile {bm}x{bn}x{bk} w{warps} s{stages}",
                         "error": str(e)[:200]})
    for r in rows:
        log(f"{m}x{n}x{k} {str(dtype):14} " + json.dumps(r))
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=".")
    a = p.parse_args()
    out = open(f"{a.out}/tile_probe.log", "w")

    def log(s):
        print(s, flush=True)
        out.write(s + "\n")
        out.flush()
    log(torch.cuda.get_device_name())
    results = {}
    for (m, n, k) in [(2000, 2300, 2600), (1200, 1200, 1000)]:
        for dtype in [torch.float64, torch.float32]:
            results[f"{m}x{n}x{k}-{dtype}"] = probe(m, n, k, dtype, log)
    x = torch.empty(1 << 27, device="cuda", dtype=torch.float64)
    y = torch.empty_like(x)
    t = timed(lambda: y.copy_(x))
    log(f"copy 1 GiB fp64: {2 * x.numel() * 8 / t / 1e9:.0f} GB/s")
    json.dump(results, open(f"{a.out}/tile_probe.json", "w"), indent=1)


if __name__ == "__main__":
    main()
