#!/usr/bin/env python3
"""What the grid barrier costs the persistent stencil loops, and whether waiting only for the
neighbouring tiles would win it back (issue 23: memory-bound natural kernels at 90 % of copy).

Part `modules`: the generated natural-set modules (jacobi_2d, smooth_swap, heat_3d, wave_decay,
fdtd_2d) at their `paper` sizes and several fixed persistent configurations, as generated and
with the grid barrier compiled out (GRID_SYNC=False in the cooperative launch: the results are
wrong, the time is the ceiling any cheaper synchronisation could reach).

Part `local`: a hand-written Jacobi-2D persistent kernel, the same tiles and expression order as
appyc's loop-form kernel, in three forms: a grid barrier after each phase (as appyc emits), a
per-tile flag that each tile's program waits on for its four neighbours only (a tile's phase p
reads its neighbours' phase p-1 values and overwrites what they read in phase p-1: both wait
for the neighbours' flags to reach p), and no synchronisation (timing only). Results checked
against NumPy at odd sizes and against the barrier form at full size (bit-equal).

    python3 bench/gpu_sync_probe.py --modules gen_npbench/natural --out $OUT [--parts modules,local]
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
import triton
import triton.language as tl

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRET else "cuda"


def interpreter_scalar_index():
    """Under Triton 3.6's interpreter with NumPy >= 2.4, a run-time loop bound is a 1-element
    array that int() refuses: convert its element (what appyc's generated modules do too)."""
    from triton.runtime import interpreter

    patch = getattr(interpreter, "_patch_lang_tensor", None)
    if patch is None:
        return

    def patch_lang_tensor(tensor, scope):
        patch(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    interpreter._patch_lang_tensor = patch_lang_tensor


if INTERPRET:
    interpreter_scalar_index()


def log(out, *parts):
    line = " ".join(str(p) for p in parts)
    print(line, flush=True)
    if out is not None:
        with open(out / "sync_probe.log", "a") as f:
            f.write(line + "\n")


def sync():
    if not INTERPRET:
        torch.cuda.synchronize()


def median_ms(fn, reps=5, restore=None):
    fn()  # warm (compiles)
    sync()
    times = []
    for _ in range(reps):
        if restore:
            restore()
        sync()
        start = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def copy_gbs():
    n = (1 << 30) // 8
    src = torch.rand(n, dtype=torch.float64, device=DEVICE)
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src), reps=10)
    return 2 * n * 8 / ms / 1e6


# ---------------------------------------------------------------- part `local`

@triton.jit
def _wait_neighbours(done, ti, tj, n_i, n_j, phase):
    nb = tl.arange(0, 4)
    di = tl.where(nb == 0, -1, tl.where(nb == 1, 1, 0))
    dj = tl.where(nb == 2, -1, tl.where(nb == 3, 1, 0))
    ni = ti + di
    nj = tj + dj
    inside = (ni >= 0) & (ni < n_i) & (nj >= 0) & (nj < n_j)
    seen = tl.atomic_add(done + ni * n_j + nj, 0, mask=inside, sem="acquire")
    lowest = tl.min(tl.where(inside, seen, phase), axis=0)
    while lowest < phase:
        seen = tl.atomic_add(done + ni * n_j + nj, 0, mask=inside, sem="acquire")
        lowest = tl.min(tl.where(inside, seen, phase), axis=0)
    tl.debug_barrier()


@triton.jit
def _sweep_tile(src, dst, N, stride0, ti, tj, ROWS: tl.constexpr, COLS: tl.constexpr):
    i = 1 + ti * ROWS + tl.arange(0, ROWS)
    j = 1 + tj * COLS + tl.arange(0, COLS)
    m = (i < N - 1)[:, None] & (j < N - 1)[None, :]
    c = i[:, None] * stride0 + j[None, :]
    v = 0.2 * (tl.load(src + c, mask=m) + tl.load(src + c - 1, mask=m) + tl.load(src + c + 1, mask=m)
               + tl.load(src + c + stride0, mask=m) + tl.load(src + c - stride0, mask=m))
    tl.store(dst + c, v, mask=m)


@triton.jit
def _grid_barrier(counter, target):
    tl.debug_barrier()
    tl.atomic_add(counter, 1, sem="release")
    while tl.atomic_add(counter, 0, sem="acquire") < target:
        pass
    tl.debug_barrier()


@triton.jit
def jacobi_sync_kernel(A, B, N, stride0, phases, counter, done,
                       ROWS: tl.constexpr, COLS: tl.constexpr, MODE: tl.constexpr):
    # MODE 0: grid barrier after each phase; 1: neighbour flags; 2: nothing (timing only)
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    n_i = tl.cdiv(N - 2, ROWS)
    n_j = tl.cdiv(N - 2, COLS)
    arrived = tl.full((), 0, tl.int64)
    for phase in range(0, phases):
        for vp in range(pid, n_i * n_j, nprog):
            tj = vp % n_j
            ti = vp // n_j
            if MODE == 1:
                if phase > 0:
                    _wait_neighbours(done, ti, tj, n_i, n_j, phase)
            if phase % 2 == 0:
                _sweep_tile(A, B, N, stride0, ti, tj, ROWS, COLS)
            else:
                _sweep_tile(B, A, N, stride0, ti, tj, ROWS, COLS)
            if MODE == 1:
                tl.debug_barrier()
                tl.atomic_xchg(done + vp, phase + 1, sem="release")
        if MODE == 0:
            arrived += nprog
            _grid_barrier(counter, arrived)


def resident_programs(kernel_args, constants, warps):
    compiled = jacobi_sync_kernel.warmup(*kernel_args, grid=(1,), **constants, num_warps=warps,
                                         launch_cooperative_grid=True)
    compiled._init_handles()
    props = torch.cuda.get_device_properties(0)
    regs = max(compiled.n_regs, 1) * 32 * warps
    by_regs = props.regs_per_multiprocessor // regs
    by_threads = 2048 // (32 * warps)
    by_smem = (props.shared_memory_per_multiprocessor // compiled.metadata.shared
               if compiled.metadata.shared else 64)
    return max(1, min(by_regs, by_threads, by_smem, 32)), compiled.n_regs


def run_local(A, B, steps, rows, cols, warps, mode, programs):
    n = A.shape[0]
    counter = torch.zeros(1, dtype=torch.int64, device=A.device)
    tiles = triton.cdiv(n - 2, rows) * triton.cdiv(n - 2, cols)
    done = torch.zeros(tiles, dtype=torch.int32, device=A.device)
    grid = (max(1, min(programs, tiles)),)
    jacobi_sync_kernel[grid](A, B, n, A.stride(0), 2 * steps, counter, done, ROWS=rows, COLS=cols,
                             MODE=mode, num_warps=warps, launch_cooperative_grid=not INTERPRET)


def numpy_jacobi(a, b, steps):
    a = a.copy()
    b = b.copy()
    for _ in range(steps):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])
    return a, b


MODES = {0: "grid barrier", 1: "neighbour flags", 2: "no sync (wrong)"}


def part_local(out, bw, results, small):
    rng = np.random.default_rng(7)
    # correctness at odd sizes, many programs and few (several tiles a program)
    for n, steps, rows, cols, programs in ((37, 5, 4, 16, 3), (131, 9, 8, 32, 5), (257, 13, 4, 64, 64)):
        a0 = rng.random((n, n))
        b0 = rng.random((n, n))
        ra, rb = numpy_jacobi(a0, b0, steps)
        for mode in (0, 1):
            A = torch.tensor(a0, device=DEVICE)
            B = torch.tensor(b0, device=DEVICE)
            # the interpreter runs programs one after another, so a wait on a later program
            # would spin: one program there, which takes every tile in order
            run_local(A, B, steps, rows, cols, 4, mode, 1 if INTERPRET else programs)
            sync()
            err = max(np.abs(A.cpu().numpy() - ra).max(), np.abs(B.cpu().numpy() - rb).max())
            ok = err < 1e-12
            log(out, f"check n={n} steps={steps} tile={rows}x{cols} programs={programs} "
                     f"{MODES[mode]}: max |diff| {err:.3g} {'ok' if ok else 'WRONG'}")
            results.append({"part": "local-check", "n": n, "mode": mode, "err": float(err), "ok": bool(ok)})
    if INTERPRET:
        return
    cases = ((2800, 1000), (4096, 200), (8192, 100)) if not small else ((512, 50),)
    configs = ((4, 256, 4), (8, 128, 4), (4, 256, 8), (8, 256, 8))
    for n, steps in cases:
        a0 = torch.rand((n, n), dtype=torch.float64, device=DEVICE)
        b0 = torch.rand((n, n), dtype=torch.float64, device=DEVICE)
        bound_ms = 32 * n * n * steps / bw / 1e6
        for rows, cols, warps in configs:
            A = a0.clone()
            B = b0.clone()
            args = (A, B, n, A.stride(0), 2, torch.zeros(1, dtype=torch.int64, device=DEVICE),
                    torch.zeros(1, dtype=torch.int32, device=DEVICE))
            per_sm_by_mode = {}
            reference = None
            for mode in (0, 1, 2):
                per_sm, regs = resident_programs(args, {"ROWS": rows, "COLS": cols, "MODE": mode}, warps)
                for cap in sorted({per_sm, max(1, min(per_sm, 32 // warps))}):
                    programs = cap * torch.cuda.get_device_properties(0).multi_processor_count

                    def restore():
                        A.copy_(a0)
                        B.copy_(b0)

                    ms = median_ms(lambda: run_local(A, B, steps, rows, cols, warps, mode, programs),
                                   reps=5, restore=restore)
                    restore()
                    run_local(A, B, steps, rows, cols, warps, mode, programs)
                    sync()
                    same = None
                    if mode == 0 and reference is None:
                        reference = A.clone()
                    elif mode == 1:
                        same = bool(torch.equal(A, reference))
                    per_sm_by_mode[mode] = per_sm
                    row = {"part": "local", "n": n, "steps": steps, "rows": rows, "cols": cols,
                           "warps": warps, "mode": MODES[mode], "programs": programs, "regs": regs,
                           "ms": ms, "x_bound": bound_ms / ms, "equal_to_barrier": same}
                    results.append(row)
                    log(out, f"local n={n} steps={steps} tile={rows}x{cols} w{warps} {MODES[mode]:16s} "
                             f"programs={programs:5d} regs={regs:3d} {ms:9.3f} ms  {100 * bound_ms / ms:5.1f} % of copy"
                             + ("" if same is None else f"  equal to barrier: {same}"))


# ---------------------------------------------------------------- part `modules`

def load(path):
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Forced(dict):
    def __init__(self, config):
        super().__init__()
        self.config = config

    def get(self, key, default=None):
        return self.config


def module_cases(n_scale):
    rng = np.random.default_rng(3)

    def t(*shape):
        return torch.tensor(rng.random(shape), device=DEVICE)

    def jac():
        n = 2800 // n_scale
        return "jacobi_2d", (1000 // n_scale, t(n, n), t(n, n)), 32 * n * n * (1000 // n_scale)

    def smooth():
        n = 4096 // n_scale
        return "smooth_swap", (200 // n_scale, t(n, n), t(n, n)), 16 * n * n * (200 // n_scale)

    def heat():
        n = 120 // n_scale
        return "heat_3d", (500 // n_scale, t(n, n, n), t(n, n, n)), 32 * n ** 3 * (500 // n_scale)

    def wave():
        n = (1 << 20) // n_scale
        return "wave_decay", (1000 // n_scale, t(n), t(n), 0.5, 0.999), 32 * n * (1000 // n_scale)

    return (jac, smooth, heat, wave)


def part_modules(out, bw, results, modules, small):
    configs = ((1024, 4, 64), (1024, 4, 32), (512, 8, 64), (512, 8, 32), (512, 4, 64), (256, 4, 64))
    for make in module_cases(8 if small else 1):
        name, args, nbytes = make()
        path = Path(modules) / f"{name}.py"
        if not path.exists():
            log(out, f"modules: {path} missing")
            continue
        mod = load(path)
        original_launch = mod._appyc_launch
        state = {"no_sync": False}

        def launch(kernel, grid, largs, constants, **options):
            if state["no_sync"] and options.get("launch_cooperative_grid"):
                constants = dict(constants, GRID_SYNC=False)
            return original_launch(kernel, grid, largs, constants, **options)

        mod._appyc_launch = launch
        tunings = [v for v in vars(mod).values() if type(v).__name__ == "_AppycTuning"]
        originals = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]

        def restore():
            for a, o in zip(args, originals):
                if isinstance(a, torch.Tensor):
                    a.copy_(o)

        fn = getattr(mod, name)
        bound_ms = nbytes / bw / 1e6
        for config in configs:
            for tuning in tunings:
                tuning.chosen = Forced(config)
            for no_sync in (False, True):
                state["no_sync"] = no_sync
                try:
                    ms = median_ms(lambda: fn(*args), reps=5, restore=restore)
                except Exception as exc:  # one configuration failing must not end the probe
                    log(out, f"module {name} {config} no_sync={no_sync}: {type(exc).__name__}: {exc}")
                    continue
                results.append({"part": "modules", "kernel": name, "config": list(config),
                                "no_sync": no_sync, "ms": ms, "x_bound": bound_ms / ms})
                log(out, f"module {name:12s} {str(config):15s} {'no sync (wrong)' if no_sync else 'as generated':16s} "
                         f"{ms:9.3f} ms  {100 * bound_ms / ms:5.1f} % of copy")
        restore()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--modules", default="gen_npbench/natural")
    parser.add_argument("--out", default=None)
    parser.add_argument("--parts", default="local,modules")
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args()
    out = Path(args.out) if args.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    bw = copy_gbs()
    log(out, f"device {torch.cuda.get_device_name(0) if not INTERPRET else 'interpreter'}; copy {bw:.0f} GB/s")
    results = [{"part": "copy", "gbs": bw}]
    parts = args.parts.split(",")
    try:
        if "local" in parts:
            part_local(out, bw, results, args.small)
        if "modules" in parts and not INTERPRET:
            part_modules(out, bw, results, args.modules, args.small)
    finally:
        if out:
            (out / "sync_probe.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
