#!/usr/bin/env python3
"""Issue 23, gemver at the `paper` size (N = 8000, fp64) on the H200: 82.8 % of copy in the run of
record (bench/npbench_natural_h200_1127d.md) against 86.3 % on the H100. Where do the bytes go
slower? One process, every result checked against NumPy:

- the device's copy bandwidth (as bench_npbench.py measures it) and a read-only bound (torch.sum
  of A);
- the whole natural call (settled tuning), and each of its two kernels alone at every candidate
  configuration: kernel 1 (A updated and A^T y down the columns: A read and written), kernel 2
  (w = A x: A read once), kernel 1 at other row-split widths;
- hand-written variants of kernel 2, to decide what appyc's lowering of a `parallel for` row
  reduction should print: a vector accumulator reduced once at the end instead of a block-wide
  reduction per strip, several rows per program (x loaded once for all of them), and the rows in
  reverse order (the rows kernel 1 wrote last may still be in L2);
- the whole sequence kernel 1 then each kernel-2 variant.

    python bench/gpu_gemver_probe.py --modules DIR --out $OUT      (DIR as bench_npbench.py
    --generate writes it; natural/gemver.py is used)
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
from pathlib import Path

import triton
import triton.language as tl

ROOT = Path(__file__).resolve().parents[1]


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@triton.jit
def _rows_dot(A, x, w, N, alpha, A_stride0, A_stride1, ROWS: tl.constexpr, MVL: tl.constexpr,
              VECTOR_ACC: tl.constexpr, REVERSE: tl.constexpr):
    """w[i] += alpha * A[i, :] @ x for ROWS rows per program."""
    pid = tl.program_id(0)
    if REVERSE:
        pid = tl.num_programs(0) - 1 - pid
    i = pid * ROWS + tl.arange(0, ROWS)
    i_mask = i < N
    if VECTOR_ACC:
        acc = tl.zeros((ROWS, MVL), tl.float64)
        for j_base in range(0, N, MVL):
            j = j_base + tl.arange(0, MVL)
            j_mask = j < N
            a = tl.load(A + i[:, None] * A_stride0 + j[None, :] * A_stride1, mask=i_mask[:, None] & j_mask[None, :], other=0.0)
            acc += a * tl.load(x + j, mask=j_mask, other=0.0)[None, :]
        s = tl.sum(acc, axis=1)
    else:
        s = tl.zeros((ROWS,), tl.float64)
        for j_base in range(0, N, MVL):
            j = j_base + tl.arange(0, MVL)
            j_mask = j < N
            a = tl.load(A + i[:, None] * A_stride0 + j[None, :] * A_stride1, mask=i_mask[:, None] & j_mask[None, :], other=0.0)
            s += tl.sum(a * tl.load(x + j, mask=j_mask, other=0.0)[None, :], axis=1)
    tl.store(w + i, tl.load(w + i, mask=i_mask) + alpha * s, mask=i_mask)


def main(args):
    import numpy as np
    import torch

    out = {"device": torch.cuda.get_device_name(), "cases": {}}
    log = open(Path(args.out) / "gemver_probe.log", "a")

    def say(text):
        print(text, flush=True)
        log.write(text + "\n")
        log.flush()

    say(f"device: {out['device']}")
    mod = load(Path(args.modules) / "natural" / "gemver.py", "gemver_natural")
    N = 8000
    rng = np.random.default_rng(7)
    host = {k: rng.random(N) for k in ("u1", "v1", "u2", "v2", "w", "x", "y", "z")}
    host["A"] = rng.random((N, N))
    alpha, beta = 1.5, 1.2
    dev = {k: torch.from_numpy(v).cuda() for k, v in host.items()}
    originals = {k: v.clone() for k, v in dev.items()}

    def restore():
        for k, v in originals.items():
            dev[k].copy_(v)

    A_ref = host["A"] + np.outer(host["u1"], host["v1"]) + np.outer(host["u2"], host["v2"])
    x_ref = host["x"] + beta * A_ref.T @ host["y"] + host["z"]
    w_ref = host["w"] + alpha * A_ref @ x_ref

    def events_median(fn, reps, before=None):
        times = []
        for _ in range(reps):
            if before is not None:
                before()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)

    nbytes = N * N * 8
    src = torch.empty(1 << 27, dtype=torch.float64, device="cuda")
    dst = torch.empty_like(src)
    copy_ms = events_median(lambda: dst.copy_(src), 30)
    copy_gbs = 2 * src.numel() * 8 / copy_ms / 1e6
    del src, dst
    read_ms = events_median(lambda: torch.sum(dev["A"]), 30)
    say(f"copy {copy_gbs:.0f} GB/s; torch.sum(A) {read_ms:.4f} ms = {nbytes / read_ms / 1e6:.0f} GB/s")
    out.update(copy_gbs=copy_gbs, sum_ms=read_ms)

    def call():
        mod.gemver(alpha, beta, dev["A"], dev["u1"], dev["v1"], dev["u2"], dev["v2"], dev["w"], dev["x"], dev["y"], dev["z"])

    for _ in range(8):  # settle tuning
        restore()
        call()
    torch.cuda.synchronize()
    restore()
    call()
    torch.cuda.synchronize()
    ok = all(np.allclose(dev[k].cpu().numpy(), ref, rtol=1e-9) for k, ref in (("A", A_ref), ("x", x_ref), ("w", w_ref)))
    whole = events_median(call, 40, before=restore)
    chosen1 = dict(mod._gemver_kernel1_tuning.chosen)
    chosen2 = dict(mod._gemver_kernel2_tuning.chosen)
    say(f"whole call {whole:.4f} ms ({3 * nbytes / whole / 1e6:.0f} GB/s, {3 * nbytes / whole / 1e6 / copy_gbs:.1%} of copy) correct={ok}; chosen k1 {list(chosen1.values())} k2 {list(chosen2.values())}")
    out["whole"] = dict(ms=whole, correct=ok, k1=[list(v) for v in chosen1.values()], k2=[list(v) for v in chosen2.values()])

    # The bench's own measure (bench_npbench.py: restore, synchronise, wall of call + synchronise)
    # beside the host part alone (until the call returns) and the GPU's time (events), to tell
    # the kernels' time from the launch path's.
    import time

    def wall_parts():
        restore()
        torch.cuda.synchronize()
        t = time.perf_counter()
        call()
        host = time.perf_counter() - t
        torch.cuda.synchronize()
        return (time.perf_counter() - t) * 1e3, host * 1e3

    def launcher_host(fn):
        restore()
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        host = time.perf_counter() - t
        torch.cuda.synchronize()
        return host * 1e3

    for round_ in range(3):
        parts = [wall_parts() for _ in range(40)]
        wall = statistics.median(p[0] for p in parts)
        host = statistics.median(p[1] for p in parts)
        c1, c2 = next(iter(chosen1.values())), next(iter(chosen2.values()))
        h1 = statistics.median(launcher_host(lambda: mod._launch_gemver_kernel1(
            dev["A"], dev["u1"], dev["v1"], dev["u2"], dev["v2"], dev["y"], dev["x"], dev["z"], N, beta)) for _ in range(20))
        h2 = statistics.median(launcher_host(lambda: mod._launch_gemver_kernel2(dev["A"], dev["x"], dev["w"], N, alpha)) for _ in range(20))
        empty = statistics.median(launcher_host(lambda: None) for _ in range(20))
        noop = []
        for _ in range(20):
            torch.cuda.synchronize()
            t = time.perf_counter()
            torch.cuda.synchronize()
            noop.append((time.perf_counter() - t) * 1e3)
        say(f"round {round_}: bench-style wall {wall:.4f} ms ({3 * nbytes / wall / 1e6 / copy_gbs:.1%} of copy), host part {host * 1e3:.1f} us, "
            f"GPU (events) {whole:.4f} ms; launcher 1 host {h1 * 1e3:.1f} us, launcher 2 host {h2 * 1e3:.1f} us, empty {empty * 1e3:.1f} us, idle sync {statistics.median(noop) * 1e3:.1f} us")
        out.setdefault("wall", []).append(dict(wall_ms=wall, host_ms=host, launcher1_ms=h1, launcher2_ms=h2))

    def k1(config):
        mod._launch_gemver_kernel1(dev["A"], dev["u1"], dev["v1"], dev["u2"], dev["v2"], dev["y"], dev["x"], dev["z"], N, beta, config)

    def k2(config):
        mod._launch_gemver_kernel2(dev["A"], dev["x"], dev["w"], N, alpha, config)

    for config in mod._gemver_kernel1_tuning.candidates:
        for per_sm in (4, 8, 16):
            mod._APPYC_SPLIT_PROGRAMS_PER_SM = per_sm
            mod._APPYC_SPLIT_STATE.clear()
            restore()
            k1(config)
            ms = events_median(lambda: k1(config), 20, before=restore)
            name = f"k1 {config} programs/SM {per_sm}"
            say(f"{name}: {ms:.4f} ms = {2 * nbytes / ms / 1e6:.0f} GB/s ({2 * nbytes / ms / 1e6 / copy_gbs:.1%})")
            out["cases"][name] = ms
    mod._APPYC_SPLIT_PROGRAMS_PER_SM = 8
    mod._APPYC_SPLIT_STATE.clear()
    for config in mod._gemver_kernel2_tuning.candidates:
        k2(config)
        ms = events_median(lambda: k2(config), 20)
        name = f"k2 {config}"
        say(f"{name}: {ms:.4f} ms = {nbytes / ms / 1e6:.0f} GB/s ({nbytes / ms / 1e6 / copy_gbs:.1%})")
        out["cases"][name] = ms

    # Variants of kernel 2, checked against NumPy after kernel 1 on restored inputs.
    variants = []
    for vector_acc in (False, True):
        for rows in (1, 2, 4, 8):
            for mvl in (256, 512, 1024):
                for warps in (4, 8):
                    if rows * mvl > 4096:
                        continue
                    variants.append((vector_acc, rows, mvl, warps))
    best = {}
    for vector_acc, rows, mvl, warps in variants:
        def run_variant(reverse=False):
            _rows_dot[(triton.cdiv(N, rows),)](dev["A"], dev["x"], dev["w"], N, alpha, dev["A"].stride(0), dev["A"].stride(1),
                                               ROWS=rows, MVL=mvl, VECTOR_ACC=vector_acc, REVERSE=reverse, num_warps=warps)
        try:
            restore()
            k1(next(iter(chosen1.values())))
            run_variant()
            good = np.allclose(dev["w"].cpu().numpy(), w_ref, rtol=1e-9)
            ms = events_median(run_variant, 20)
        except Exception as e:  # noqa: BLE001 - a variant that does not compile is reported
            say(f"variant acc={vector_acc} rows={rows} mvl={mvl} warps={warps}: {type(e).__name__}: {str(e)[:200]}")
            continue
        name = f"k2 variant vector_acc={vector_acc} rows={rows} mvl={mvl} warps={warps}"
        say(f"{name}: {ms:.4f} ms = {nbytes / ms / 1e6:.0f} GB/s ({nbytes / ms / 1e6 / copy_gbs:.1%}) correct={good}")
        out["cases"][name] = ms
        if good:
            best[(vector_acc, rows, mvl, warps)] = ms
    top = sorted(best, key=best.get)[:4]
    c1 = next(iter(chosen1.values()))
    c2 = next(iter(chosen2.values()))
    sequences = {"k1 + k2 (chosen)": lambda: (k1(c1), k2(c2))}
    for v in top:
        for reverse in (False, True):
            def seq(v=v, reverse=reverse):
                k1(c1)
                _rows_dot[(triton.cdiv(N, v[1]),)](dev["A"], dev["x"], dev["w"], N, alpha, dev["A"].stride(0), dev["A"].stride(1),
                                                   ROWS=v[1], MVL=v[2], VECTOR_ACC=v[0], REVERSE=reverse, num_warps=v[3])
            sequences[f"k1 + variant {v} reverse={reverse}"] = seq
    for round_ in range(3):  # interleaved rounds
        for name, seq in sequences.items():
            ms = events_median(seq, 15, before=restore)
            say(f"round {round_} {name}: {ms:.4f} ms ({3 * nbytes / ms / 1e6 / copy_gbs:.1%} of copy)")
            out["cases"].setdefault(name, []).append(ms)
    (Path(args.out) / "gemver_probe.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--modules", required=True)
    parser.add_argument("--out", required=True)
    a = parser.parse_args()
    os.makedirs(a.out, exist_ok=True)
    main(a)
