#!/usr/bin/env python3
"""A strip loop's reduction into a scalar, three ways, on one GPU: why lane accumulators
(`Reduce::lanes`, stop 46) win at small strips and lose 1-2 % at gesummv's tuned 1024 lanes.

One program a row of an M x N float64 matrix, `y[p] = sum_j A[p, j] * x[j]` (gesummv's row
pass at NPBench's `paper` size, N = 11200), each form checked against torch:
- strip:    each strip reduced across its lanes into the scalar (the printer before stop 46);
- lanes:    each strip added into a vector of the lanes, reduced once after the loop;
- lanes_sync: lanes, with a CTA barrier each strip (the strip form's barrier without its
            reduction: does the barrier's lockstep, not the reduction, make the difference?).
Crossed with the strip width, warps and Triton's `num_stages`; back to back (CUDA events),
the variants interleaved over rounds, the median kept.

    python bench/gpu_lane_reduction.py --out DIR
"""
import argparse
import json
import statistics
from pathlib import Path

import torch
import triton
import triton.language as tl

FORMS = {"strip": 0, "lanes": 1, "lanes_sync": 2}


@triton.jit
def row_dot(A, x, y, N, FORM: tl.constexpr, MVL: tl.constexpr):
    p = tl.program_id(0).to(tl.int64)
    if FORM == 0:
        acc = tl.zeros((), tl.float64)
        for b in range(0, N, MVL):
            j = b + tl.arange(0, MVL)
            m = j < N
            acc = acc + tl.sum(tl.where(m, tl.load(A + p * N + j, mask=m) * tl.load(x + j, mask=m), 0), axis=0)
    else:
        lanes = tl.zeros((MVL,), tl.float64)
        for b in range(0, N, MVL):
            j = b + tl.arange(0, MVL)
            m = j < N
            lanes = lanes + tl.where(m, tl.load(A + p * N + j, mask=m) * tl.load(x + j, mask=m), 0)
            if FORM == 2:
                tl.debug_barrier()
        acc = tl.sum(lanes, axis=0)
    tl.store(y + p, acc)


def main(a):
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "lane_reduction.log", "a")

    def say(text):
        print(text, flush=True)
        log.write(text + "\n")
        log.flush()

    M = N = a.n
    A = torch.rand(M, N, dtype=torch.float64, device="cuda")
    x = torch.rand(N, dtype=torch.float64, device="cuda")
    want = A @ x
    y = torch.empty(M, dtype=torch.float64, device="cuda")
    variants = [(f, mvl, warps, stages) for f in FORMS for mvl in a.mvl for warps in a.warps
                for stages in a.stages]

    def launch(v):
        f, mvl, warps, stages = v
        row_dot[(M,)](A, x, y, N, FORM=FORMS[f], MVL=mvl, num_warps=warps, num_stages=stages)

    for v in variants:
        y.zero_()
        launch(v)
        torch.cuda.synchronize()
        err = float((y - want).abs().max() / want.abs().max())
        assert err < 1e-12, (v, err)
    say(f"device {torch.cuda.get_device_name()}; M = N = {N}; {len(variants)} variants checked")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = {v: [] for v in variants}
    for r in range(a.rounds):
        for v in variants[r % len(variants):] + variants[:r % len(variants)]:
            launch(v)
            start.record()
            for _ in range(a.reps):
                launch(v)
            end.record()
            end.synchronize()
            times[v].append(start.elapsed_time(end) / a.reps)
    bytes_read = (M * N + N) * 8
    rows = []
    for v in sorted(variants, key=lambda v: statistics.median(times[v])):
        ms = statistics.median(times[v])
        rows.append({"form": v[0], "mvl": v[1], "warps": v[2], "stages": v[3], "ms": times[v]})
        say(f"{v[0]:10s} MVL {v[1]:4d} warps {v[2]} stages {v[3]}: {ms:.4f} ms, {bytes_read / ms / 1e6:.0f} GB/s")
    (out / "lane_reduction.json").write_text(json.dumps({"device": torch.cuda.get_device_name(), "n": N,
                                                         "variants": rows}, indent=1))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=11200)
    p.add_argument("--mvl", type=int, nargs="+", default=[128, 256, 512, 1024, 2048])
    p.add_argument("--warps", type=int, nargs="+", default=[4, 8])
    p.add_argument("--stages", type=int, nargs="+", default=[1, 3])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--out", default="lane_reduction_out")
    main(p.parse_args())
