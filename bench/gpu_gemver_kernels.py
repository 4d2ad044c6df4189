#!/usr/bin/env python3
"""Issue 23, gemver (natural) at the `paper` size on one GPU: how close can the two kernels appyc
emits come to the copy rate, and which of their shape parameters decides it?

§65 found the two kernels at the copy rate back to back on an H100 (0.537 ms a call). On an
H200 (stop 43) they took 0.403 ms a call back to back, 1.54 GB at 3.82 TB/s, where a 1 GiB
copy runs near 4.3 TB/s: this probe times, back to back with CUDA events, hand-written kernels
of the same structure as appyc's with the shape parameters the generated code fixes opened up:

- k1 (A updated, column sums of A * y down split row ranges, the last split of a column block
  combining): rows per tile, columns per tile (MVL), warps, programs per SM for the row split,
  and the cache policy of A's loads and stores;
- k2 (w = A x, row dot products): rows per program, MVL, warps;
- references: torch's copy of A (read + write) and a read-only Triton pass over A.

Every k1/k2 variant is checked against torch's float64 math before it is timed.

`--reordered` times pairs with A's update moved to the row pass (§67); `--floors` times a copy
against updates in place and k1 without its column sums, and k2's row order after k1 (§68).

    python bench/gpu_gemver_kernels.py --out DIR [--reps 30] [--quick | --focus | --reordered | --floors]
"""
import argparse
import itertools
import json
import time
from pathlib import Path

import torch
import triton
import triton.language as tl


@triton.jit
def k1(A, u1, v1, u2, v2, y, x, z, N, beta: "fp64", partials, arrivals, split_rows,
       ROWS: tl.constexpr, MVL: tl.constexpr, LOAD_POLICY: tl.constexpr, STORE_CS: tl.constexpr,
       STORE: tl.constexpr = True, REDUCE: tl.constexpr = True, STORE_POLICY: tl.constexpr = ""):
    j = tl.program_id(0) * MVL + tl.arange(0, MVL)
    j_mask = j < N
    split = tl.program_id(1)
    lo = split * split_rows
    hi = tl.minimum(lo + split_rows, N)
    v1j = tl.load(v1 + j, mask=j_mask)
    v2j = tl.load(v2 + j, mask=j_mask)
    acc = tl.zeros((ROWS, MVL), tl.float64)
    for base in range(lo, hi, ROWS):
        i = base + tl.arange(0, ROWS)
        m = (i < hi)[:, None] & j_mask
        ptr = A + i[:, None] * N + j
        a = tl.load(ptr, mask=m, eviction_policy=LOAD_POLICY)
        a = a + tl.load(u1 + i, mask=i < hi)[:, None] * v1j + tl.load(u2 + i, mask=i < hi)[:, None] * v2j
        if not STORE:
            pass  # reordered: the updated A is recomputed here and stored by k2 (UPDATE)
        elif STORE_CS:
            tl.store(ptr, a, mask=m, cache_modifier=".cs")
        else:
            tl.store(ptr, a, mask=m, eviction_policy=STORE_POLICY)
        if REDUCE:
            acc += tl.where(m, a * tl.load(y + i, mask=i < hi)[:, None], 0.0)
    if not REDUCE:  # --floors: the strip update alone (x is left as it was)
        return
    part = partials + tl.program_id(0) * MVL + tl.arange(0, MVL)
    stride = tl.num_programs(0) * MVL
    tl.store(part + split * stride, tl.sum(acc, axis=0))
    tl.debug_barrier()
    arrived = tl.atomic_add(arrivals + tl.program_id(0), 1, sem="acq_rel")
    if arrived == tl.num_programs(1) - 1:
        tl.debug_barrier()
        total = tl.load(part, cache_modifier=".cg")
        for k in range(1, tl.num_programs(1)):
            total += tl.load(part + k * stride, cache_modifier=".cg")
        tl.store(arrivals + tl.program_id(0), 0)
        tl.store(x + j, tl.load(x + j, mask=j_mask) + beta * total + tl.load(z + j, mask=j_mask), mask=j_mask)


@triton.jit
def k2(A, x, w, N, alpha: "fp64", RPP: tl.constexpr, MVL: tl.constexpr, LOAD_POLICY: tl.constexpr,
       u1=None, v1=None, u2=None, v2=None, UPDATE: tl.constexpr = False, ORDER: tl.constexpr = 0,
       bands=1, band_blocks=1):
    b = tl.program_id(0)
    if ORDER == 1:  # --floors: rows last-first
        b = tl.num_programs(0) - 1 - b
    elif ORDER == 2:  # --floors: the last rows of each of k1's split bands first, bands interleaved
        b = (b % bands) * band_blocks + band_blocks - 1 - b // bands
    i = b * RPP + tl.arange(0, RPP)
    i_mask = i < N
    acc = tl.zeros((RPP, MVL), tl.float64)
    if UPDATE:
        u1i = tl.load(u1 + i, mask=i_mask, other=0.0)[:, None]
        u2i = tl.load(u2 + i, mask=i_mask, other=0.0)[:, None]
    for base in range(0, N, MVL):
        j = base + tl.arange(0, MVL)
        m = i_mask[:, None] & (j < N)
        ptr = A + i[:, None] * N + j
        a = tl.load(ptr, mask=m, other=0.0, eviction_policy=LOAD_POLICY)
        if UPDATE:  # reordered: the rows of A updated here, where they are read in order
            a = a + u1i * tl.load(v1 + j, mask=j < N, other=0.0) + u2i * tl.load(v2 + j, mask=j < N, other=0.0)
            tl.store(ptr, a, mask=m)
        acc += a * tl.load(x + j, mask=j < N, other=0.0)
    tl.store(w + i, tl.load(w + i, mask=i_mask) + alpha * tl.sum(acc, axis=1), mask=i_mask)


@triton.jit
def read_only(A, out, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float64)
    for base in range(0, n, stride):
        o = base + offs
        acc += tl.load(A + o, mask=o < n, other=0.0)
    tl.store(out + tl.program_id(0), tl.sum(acc, axis=0))


@triton.jit
def add_in_place(A, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(A + offs, tl.load(A + offs, mask=m) + 1.0, mask=m)


@triton.jit
def copy_out_of_place(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=m), mask=m)


def interpreter_scalar_index():
    """Under Triton 3.6's interpreter with NumPy >= 2.4 a run-time scalar is a 1-element array,
    which `range` cannot take (int(array) is gone); appyc's generated modules carry the same fix."""
    from triton.runtime import interpreter

    patch = interpreter._patch_lang_tensor

    def patch_lang_tensor(tensor, scope):
        patch(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    interpreter._patch_lang_tensor = patch_lang_tensor


def focus(args, say, results, k1_space, k1_launch, check, f2, timed, out):
    """k1's shapes only, each checked, then timed in rounds with the variants interleaved (the
    full sweep's single pass moved up to 10 % between neighbours): the median over the rounds."""
    launches = {}
    for c in k1_space:
        f1 = k1_launch(*c)
        err = check(f1, f2)
        launches[c] = f1
        results["k1"].append([list(c), [], err])
        say(f"k1 {c[:4]}: err {err:.1e}")
    for r in range(args.rounds):
        order = k1_space[r % len(k1_space):] + k1_space[:r % len(k1_space)]
        for c in order:
            next(e for e in results["k1"] if tuple(e[0]) == c)[1].append(timed(launches[c], args.reps))
    for e in sorted(results["k1"], key=lambda e: sorted(e[1])[len(e[1]) // 2]):
        ms = sorted(e[1])
        say(f"k1 rows {e[0][0]:3d} mvl {e[0][1]:4d} warps {e[0][2]} per_sm {e[0][3]:2d}: median {ms[len(ms) // 2]:.4f} "
            f"ms (min {ms[0]:.4f}, max {ms[-1]:.4f}), {2 * args.n ** 2 * 8 / ms[len(ms) // 2] / 1e6:.0f} GB/s")
    (out / "gemver_kernels_focus.json").write_text(json.dumps(results, indent=1))


def reordered(args, say, results, k1_launch, k2_launch, check, timed, out):
    """The same three passes over A in another order: the column sums read A and recompute the
    updated elements without storing them (k1, STORE=False), and the row pass updates each row
    where it reads it for the dot product (k2, UPDATE=True): a read-only strip pass and a
    copy-like row pass, instead of a read-write strip pass and a read-only row pass. Pairs of
    each order, each checked, then timed back to back in interleaved rounds."""
    pairs = {}
    for c1 in [(32, 64, 8, 8), (16, 128, 4, 16), (16, 128, 4, 8), (32, 128, 4, 8), (16, 256, 4, 8)]:
        for c2 in [(1, 512, 4), (4, 512, 4), (1, 1024, 8), (2, 512, 4)]:
            for order in ("as_written", "reordered"):
                r = order == "reordered"
                f1 = k1_launch(*c1, "", False, store=not r)
                f2 = k2_launch(*c2, "", update=r)
                err = check(f1, f2)
                assert err < 1e-9, (order, c1, c2, err)
                pairs[(order, c1, c2)] = (f1, f2)
    say(f"{len(pairs)} pairs checked against torch's float64 math")
    times = {k: [] for k in pairs}
    keys = list(pairs)
    for r in range(args.rounds):
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            f1, f2 = pairs[k]
            times[k].append(timed(lambda: (f1(), f2()), args.reps))
    med = lambda ts: sorted(ts)[len(ts) // 2]  # noqa: E731
    gb = 3 * args.n ** 2 * 8 / 1e9
    rows = []
    for k in sorted(keys, key=lambda k: med(times[k])):
        rows.append({"order": k[0], "k1": list(k[1]), "k2": list(k[2]), "ms": times[k]})
        say(f"{k[0]:10s} k1 {k[1]} k2 {k[2]}: median {med(times[k]):.4f} ms, {gb / med(times[k]) * 1e3:.0f} GB/s")
    results["pairs"] = rows
    (out / "gemver_kernels_reordered.json").write_text(json.dumps(results, indent=1))


def floors(args, say, results, k1_split, k1_launch, k2_launch, check, timed, out, A, N):
    """Two questions, back to back with CUDA events, variants interleaved over --rounds.
    1. Is k1's read-write pass slow for its shape or its kind? A copy out of place against
       updates in place (torch and a flat Triton pass), and k1 with and without its column
       reduction: if an in-place update of A is no faster than k1, the copy rate is not a bound
       an in-place pass can reach.
    2. Can k2 read part of what k1 wrote from L2? Pairs with k2's rows in order, last-first, or
       each of k1's split bands last-first with the bands interleaved (the rows k1 wrote last
       first), and k1's stores marked evict_last. Every pair is checked against torch's math."""
    dst = torch.empty_like(A)
    n = N * N
    single = {"torch copy (out of place)": lambda: dst.copy_(A), "torch add_ (in place)": lambda: A.add_(1.0)}
    for block in (1024, 4096):
        grid = triton.cdiv(n, block)
        single[f"triton copy, block {block}"] = (
            lambda g=grid, b=block: copy_out_of_place[(g,)](A, dst, n, BLOCK=b, num_warps=8))
        single[f"triton add in place, block {block}"] = (
            lambda g=grid, b=block: add_in_place[(g,)](A, n, BLOCK=b, num_warps=8))
    shapes = [(32, 64, 8, 8), (16, 128, 4, 16), (16, 256, 4, 8)]
    for c1 in shapes:
        single[f"k1 {c1} update only"] = k1_launch(*c1, "", False, reduce=False)
        single[f"k1 {c1}"] = k1_launch(*c1, "", False)
    pairs = {}
    for c1 in shapes[::2]:
        _, splits, per_split = k1_split(c1[0], c1[1], c1[3])
        for store_policy in ("", "evict_last"):
            f1 = k1_launch(*c1, "", False, store_policy=store_policy)
            for order in (0, 1, 2):
                f2 = k2_launch(4, 512, 4, "", order=order, bands=splits, band_rows=per_split)
                err = check(f1, f2)
                assert err < 1e-9, (c1, store_policy, order, err)
                pairs[f"pair k1 {c1} store {store_policy or '-'} k2 order {order}"] = (
                    lambda f1=f1, f2=f2: (f1(), f2()))
    say(f"{len(pairs)} pairs checked against torch's float64 math")
    variants = {**single, **pairs}
    times = {k: [] for k in variants}
    keys = list(variants)
    for r in range(args.rounds):
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            times[k].append(timed(variants[k], args.reps))
    med = lambda ts: sorted(ts)[len(ts) // 2]  # noqa: E731
    rows = []
    for k in keys:
        gb = (3 if k.startswith("pair") else 2) * n * 8 / 1e9
        rows.append({"variant": k, "ms": times[k], "GBps": gb / med(times[k]) * 1e3})
        say(f"{k:50s} median {med(times[k]):.4f} ms (min {min(times[k]):.4f}), {gb / med(times[k]) * 1e3:.0f} GB/s")
    results["floors"] = rows
    (out / "gemver_kernels_floors.json").write_text(json.dumps(results, indent=1))


def main(args):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "gemver_kernels.log", "a")

    def say(text):
        print(text, flush=True)
        log.write(text + "\n")
        log.flush()

    N = args.n
    if args.cpu:
        interpreter_scalar_index()
    dev = "cpu" if args.cpu else "cuda"  # the CPU: a smoke test under TRITON_INTERPRET=1
    g = torch.Generator(device=dev).manual_seed(7)
    r = lambda *s: torch.rand(*s, dtype=torch.float64, device=dev, generator=g)  # noqa: E731
    A0 = r(N, N)
    u1, v1, u2, v2, w0, x0, y, z = (r(N) for _ in range(8))
    alpha, beta = 1.5, 1.2
    A = A0.clone()
    x, w = x0.clone(), w0.clone()
    # the math, float64
    A_ref = A0 + torch.outer(u1, v1) + torch.outer(u2, v2)
    x_ref = x0 + beta * (A_ref.T @ y) + z
    w_ref = w0 + alpha * (A_ref @ x_ref)
    sms = 2 if args.cpu else torch.cuda.get_device_properties(0).multi_processor_count
    name = "cpu" if args.cpu else torch.cuda.get_device_name()
    gbytes = 3 * N * N * 8 / 1e9
    say(f"device {name}, {sms} SMs; gemver moves {gbytes:.3f} GB (A read, written, read)")

    def timed(fn, reps):
        fn()
        if args.cpu:
            t = time.perf_counter()
            fn()
            return (time.perf_counter() - t) * 1e3
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        best = None
        for _ in range(3):
            start.record()
            for _ in range(reps):
                fn()
            end.record()
            end.synchronize()
            ms = start.elapsed_time(end) / reps
            best = ms if best is None else min(best, ms)
        return best

    results = {"device": name, "sms": sms, "k1": [], "k2": []}
    dst = torch.empty_like(A0)
    ms = timed(lambda: dst.copy_(A0), args.reps)
    results["copy_A_ms"] = ms
    say(f"torch copy of A: {ms:.4f} ms, {2 * N * N * 8 / ms / 1e6:.0f} GB/s")
    del dst
    part = torch.empty(sms * 32, dtype=torch.float64, device=dev)
    for block, progs in ((1024, 4), (2048, 4), (1024, 8)):
        grid = progs * sms
        ms = timed(lambda: read_only[(grid,)](A0, part, N * N, grid * block, BLOCK=block, num_warps=8), args.reps)
        results.setdefault("read_only", []).append([block, progs, ms])
        say(f"read-only pass over A (block {block}, {progs}/SM): {ms:.4f} ms, {N * N * 8 / ms / 1e6:.0f} GB/s")

    arrivals = torch.zeros(N, dtype=torch.int32, device=dev)
    partials = torch.empty(64 * sms * 256 + N * 64, dtype=torch.float64, device=dev)

    def k1_split(rows, mvl, per_sm):
        """(column blocks, splits, rows per split) of k1's grid, as appyc's row split makes them."""
        blocks = triton.cdiv(N, mvl)
        splits = max(1, min(triton.cdiv(per_sm * sms, blocks), max(N // 128, 1)))
        per_split = triton.cdiv(triton.cdiv(N, splits), rows) * rows
        return blocks, triton.cdiv(N, per_split), per_split

    def k1_launch(rows, mvl, warps, per_sm, policy, store_cs, store=True, reduce=True, store_policy=""):
        blocks, splits, per_split = k1_split(rows, mvl, per_sm)
        return lambda: k1[(blocks, splits)](A, u1, v1, u2, v2, y, x, z, N, beta, partials, arrivals, per_split,
                                            ROWS=rows, MVL=mvl, LOAD_POLICY=policy, STORE_CS=store_cs,
                                            STORE=store, REDUCE=reduce, STORE_POLICY=store_policy,
                                            num_warps=warps)

    def k2_launch(rpp, mvl, warps, policy, update=False, order=0, bands=1, band_rows=None):
        vecs = (u1, v1, u2, v2) if update else (None,) * 4
        band_blocks = triton.cdiv(band_rows or N, rpp)
        grid = bands * band_blocks if order == 2 else triton.cdiv(N, rpp)
        return lambda: k2[(grid,)](A, x, w, N, alpha, rpp, mvl, policy, *vecs, UPDATE=update, ORDER=order,
                                   bands=bands, band_blocks=band_blocks, num_warps=warps)

    def check(f1, f2):
        A.copy_(A0)
        x.copy_(x0)
        w.copy_(w0)
        f1()
        f2()
        if not args.cpu:
            torch.cuda.synchronize()
        return max(float((A - A_ref).abs().max()), float(((x - x_ref).abs().max() / x_ref.abs().max())),
                   float(((w - w_ref).abs().max() / w_ref.abs().max())))

    base1 = (32, 64, 8, 8, "", False)  # appyc's k1 as the tuner chose it on the H200 (stop 43)
    base2 = (1, 512, 4, "")
    if args.reordered:
        return reordered(args, say, results, k1_launch, k2_launch, check, timed, out)
    if args.floors:
        return floors(args, say, results, k1_split, k1_launch, k2_launch, check, timed, out, A, N)
    if args.focus:
        k1_space = [(32, 64, 8, 8), (32, 64, 4, 8), (32, 128, 4, 8), (16, 128, 4, 16), (16, 128, 4, 8),
                    (16, 256, 4, 8), (16, 64, 8, 4), (8, 256, 4, 8), (8, 512, 4, 8), (8, 512, 8, 8),
                    (4, 512, 4, 8), (4, 1024, 4, 8), (4, 1024, 8, 8), (2, 1024, 4, 8), (2, 2048, 8, 8),
                    (8, 1024, 8, 8), (4, 1024, 8, 4), (4, 1024, 8, 16), (1, 2048, 8, 8), (1, 4096, 8, 8)]
        k1_space = [c + ("", False) for c in k1_space]
        return focus(args, say, results, k1_space, k1_launch, check, k2_launch(*base2), timed, out)
    if args.quick:
        k1_space = [base1, (32, 128, 8, 8, "", False)]
        k2_space = [base2, (4, 512, 4, "")]
    else:
        k1_space = [c for c in itertools.product((16, 32, 64), (32, 64, 128, 256), (4, 8), (4, 8, 16), ("",), (False,))
                    if 512 <= c[0] * c[1] <= 8192]
        k1_space += [(32, 64, 8, 8, "evict_first", False), (32, 64, 8, 8, "", True),
                     (32, 64, 8, 8, "evict_first", True), (32, 128, 8, 8, "evict_first", True)]
        k2_space = [c for c in itertools.product((1, 2, 4, 8), (256, 512, 1024, 2048), (4, 8), ("",))
                    if c[0] * c[1] <= 8192]
        k2_space += [(1, 512, 4, "evict_first"), (4, 512, 4, "evict_first")]
    t_end = time.perf_counter() + args.budget
    f2_base = k2_launch(*base2)
    for c in k1_space:
        if time.perf_counter() > t_end:
            say("budget spent")
            break
        f1 = k1_launch(*c)
        err = check(f1, f2_base)
        ms = timed(f1, args.reps)
        results["k1"].append([list(c), ms, err])
        say(f"k1 rows {c[0]:3d} mvl {c[1]:4d} warps {c[2]} per_sm {c[3]:2d} load {c[4] or '-':11s} store_cs {c[5]!s:5s}: "
            f"{ms:.4f} ms, {2 * N * N * 8 / ms / 1e6:.0f} GB/s, err {err:.1e}")
    f1_base = k1_launch(*base1)
    for c in k2_space:
        if time.perf_counter() > t_end:
            say("budget spent")
            break
        f2 = k2_launch(*c)
        err = check(f1_base, f2)
        ms = timed(f2, args.reps)
        results["k2"].append([list(c), ms, err])
        say(f"k2 rpp {c[0]} mvl {c[1]:4d} warps {c[2]} load {c[3] or '-':11s}: {ms:.4f} ms, "
            f"{N * N * 8 / ms / 1e6:.0f} GB/s, err {err:.1e}")
    ok1 = [e for e in results["k1"] if e[2] < 1e-9]
    ok2 = [e for e in results["k2"] if e[2] < 1e-9]
    if ok1 and ok2:
        b1, b2 = min(ok1, key=lambda e: e[1]), min(ok2, key=lambda e: e[1])
        pair = timed(lambda: (k1_launch(*b1[0])(), k2_launch(*b2[0])()), args.reps)
        basepair = timed(lambda: (f1_base(), f2_base()), args.reps)
        results.update(best_k1=b1, best_k2=b2, best_pair_ms=pair, base_pair_ms=basepair)
        say(f"pair back to back: appyc's shapes {basepair:.4f} ms ({gbytes / basepair * 1e3:.0f} GB/s); "
            f"best k1 {b1[0]} + best k2 {b2[0]} {pair:.4f} ms ({gbytes / pair * 1e3:.0f} GB/s)")
    bad = [e for e in results["k1"] + results["k2"] if not e[2] < 1e-9]
    say(f"{len(bad)} variants wrong")
    (out / "gemver_kernels.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="gemver_kernels_out")
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--budget", type=float, default=240, help="seconds for the variants")
    p.add_argument("--n", type=int, default=8000, help="A is n x n (8000: NPBench's paper size)")
    p.add_argument("--cpu", action="store_true", help="CPU tensors (with TRITON_INTERPRET=1: a smoke test)")
    p.add_argument("--reordered", action="store_true",
                   help="pairs: the passes as appyc orders them and with A's update moved to the row pass")
    p.add_argument("--focus", action="store_true", help="k1's shapes, interleaved over --rounds")
    p.add_argument("--floors", action="store_true",
                   help="copy against in-place updates and k1 without its reduction; k2's row order after k1")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="two variants each (a smoke test)")
    main(p.parse_args())
