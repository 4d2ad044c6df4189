"""Issue 25, 3-D: appyc's generated 3-D blocked kernel (codegen/triton/gluon3d.rs) on the GPU.

Checks every blocked function of samples/stencils_3d.py and the natural heat_3d, float64 and
float32, at sizes that divide neither tiles nor chunks, against the source run in NumPy and
against the plain persistent kernel (APPYC_TEMPORAL_3D=0), the size threshold lowered to 0 so
that small arrays take the blocked path too; then times both forms at sizes past it.

    python bench/gpu_blocked3d_check.py --modules .devcarry/b3 --out $OUT

`--modules` holds stencils_3d.py and heat_3d.py compiled by appyc (appyc samples/stencils_3d.py
-o DIR/stencils_3d.py; appyc scripts/npbench_natural/heat_3d.py -o DIR/heat_3d.py).
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


LOG = None


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    if LOG:
        LOG.write(s + "\n")
        LOG.flush()


def args_for(name, shape, steps, rng, dtype):
    R = lambda: rng.random(shape).astype(dtype)  # noqa: E731
    L, M, N = shape
    return {
        "heat_loops": lambda: [R(), R(), steps],
        "heat_slices": lambda: [R(), R(), L, M, N, steps],
        "plane_diagonals": lambda: [R(), R(), L, M, N, steps],
        "upwind": lambda: [R(), R(), 0.2, L, M, N, steps],
        "heat_3d": lambda: [steps, R(), R()],
        "heat_swap": lambda: [R(), R(), steps],
        "heat_swap_bare": lambda: [R(), R(), steps],
    }[name]()


def run_torch(mod, name, args, torch, blocked):
    os.environ["APPYC_TEMPORAL_3D"] = "1" if blocked else "0"
    t = [torch.tensor(a, device="cuda") if isinstance(a, np.ndarray) else a for a in args]
    mod._APPYC_BLOCKED_3D_PLAN.clear()
    getattr(mod, name)(*t)
    torch.cuda.synchronize()
    ran = bool(mod._APPYC_BLOCKED_3D_PLAN)
    return [x.cpu().numpy() if hasattr(x, "cpu") else x for x in t], ran


def main():
    global LOG
    ap = argparse.ArgumentParser()
    ap.add_argument("--modules", default=".devcarry/b3")
    ap.add_argument("--out", default="/tmp/b3")
    ap.add_argument("--deadline", type=float, default=480)
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--only", default="", help="functions to check and time, e.g. heat_swap,heat_swap_bare")
    ap.add_argument("--sweep", action="store_true",
                    help="only time the natural heat_3d at the launcher's plan variants (tile, warps, register cap)")
    ap.add_argument("--untuned-plain", action="store_true",
                    help="time the plain kernel at its default configuration (APPYC_AUTOTUNE=0)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    LOG = open(os.path.join(a.out, "blocked3d_check.log"), "a")
    import torch

    t0 = time.time()
    sys.path.insert(0, os.path.join(ROOT, "samples"))
    sys.path.insert(0, os.path.join(ROOT, "scripts", "npbench_natural"))
    import heat_3d as heat_src
    import stencils_3d as src

    mods = {"stencils_3d": load(os.path.join(a.modules, "stencils_3d.py"), "st3"),
            "heat_3d": load(os.path.join(a.modules, "heat_3d.py"), "h3")}
    log(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    rng = np.random.default_rng(11)
    recs = []
    funcs = [("stencils_3d", "heat_loops", src.heat_loops), ("stencils_3d", "heat_slices", src.heat_slices),
             ("stencils_3d", "plane_diagonals", src.plane_diagonals), ("stencils_3d", "upwind", src.upwind),
             ("heat_3d", "heat_3d", heat_src.heat_3d),
             ("stencils_3d", "heat_swap", src.heat_swap), ("stencils_3d", "heat_swap_bare", src.heat_swap_bare)]
    if a.only:
        funcs = [f for f in funcs if f[1] in a.only.split(",")]
    if not a.no_check:
        for m in mods.values():
            m._APPYC_BLOCKED_3D_MIN_BYTES = 0
        for modname, name, fn in funcs:
            for dtype in (np.float64, np.float32):
                for shape, steps in (((13, 11, 17), 5), ((37, 37, 37), 8), ((45, 29, 130), 7),
                                     ((70, 33, 61), 1), ((130, 130, 130), 3)):
                    if name == "heat_3d":
                        shape = (shape[0],) * 3
                    args = args_for(name, shape, steps, rng, dtype)
                    ref = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
                    fn(*ref)
                    try:
                        got, ran = run_torch(mods[modname], name, args, torch, True)
                        plain, _ = run_torch(mods[modname], name, args, torch, False)
                    except Exception as e:
                        log(f"{name} {np.dtype(dtype).name} {shape} x {steps}: FAILED {type(e).__name__}: {str(e)[:400]}")
                        recs.append(dict(kind="check", name=name, ok=False))
                        continue
                    arrs = [(g, r, p) for g, r, p in zip(got, ref, plain) if isinstance(r, np.ndarray)]
                    scale = max(float(np.abs(r).max()) for _, r, _ in arrs)
                    vs_np = max(float(np.abs(g - r).max()) for g, r, _ in arrs) / scale
                    vs_plain = max(float(np.abs(g - p).max()) for g, _, p in arrs) / scale
                    tol = 1e-13 if dtype == np.float64 else 2e-5
                    # A swap loop of one step runs on the plain kernel (a pair is the least
                    # the blocked kernel takes).
                    expect_blocked = not (name.startswith("heat_swap") and steps < 2)
                    ok = ran == expect_blocked and vs_np <= tol and vs_plain <= tol
                    log(f"{'ok' if ok else 'WRONG'} {name} {np.dtype(dtype).name} {shape} x {steps}: blocked ran {ran}, "
                        f"rel max diff vs NumPy {vs_np:.3g}, vs plain {vs_plain:.3g}")
                    recs.append(dict(kind="check", name=name, dtype=np.dtype(dtype).name, shape=shape,
                                     steps=steps, ran=ran, vs_numpy=vs_np, vs_plain=vs_plain, ok=ok))
        for m in mods.values():
            m._APPYC_BLOCKED_3D_MIN_BYTES = 8 << 20
    if a.untuned_plain:
        os.environ["APPYC_AUTOTUNE"] = "0"
    n = 1 << 27
    s = torch.rand(n, dtype=torch.float64, device="cuda")
    d = torch.empty_like(s)
    d.copy_(s)

    def timed(fn):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        return e0.elapsed_time(e1)

    bw = 2 * n * 8 / (statistics.median(timed(lambda: d.copy_(s)) for _ in range(10)) / 1e3)
    del s, d
    log(f"copy bandwidth {bw / 1e9:.0f} GB/s")
    if a.sweep:
        sweep(mods["heat_3d"], rng, bw, timed, torch, recs)
        with open(os.path.join(a.out, "blocked3d_sweep.json"), "w") as f:
            json.dump(dict(bw=bw, recs=recs), f, indent=1, default=str)
        return
    for modname, name, shape, steps, dtype in (
            ("heat_3d", "heat_3d", (120, 120, 120), 500, np.float64),
            ("heat_3d", "heat_3d", (120, 120, 120), 500, np.float32),
            ("stencils_3d", "heat_loops", (256, 256, 256), 100, np.float64),
            ("stencils_3d", "heat_slices", (200, 190, 210), 100, np.float64),
            ("stencils_3d", "plane_diagonals", (120, 120, 120), 500, np.float64),
            ("stencils_3d", "upwind", (120, 120, 120), 500, np.float64),
            ("heat_3d", "heat_3d", (64, 64, 64), 500, np.float64),
            ("stencils_3d", "heat_swap", (120, 120, 120), 500, np.float64),
            ("stencils_3d", "heat_swap", (256, 256, 256), 101, np.float64),
            ("stencils_3d", "heat_swap_bare", (120, 120, 120), 500, np.float64)):
        if a.only and name not in a.only.split(","):
            continue
        if time.time() - t0 > a.deadline:
            log(f"deadline: {name} {shape} not timed")
            continue
        mod = mods[modname]
        args = args_for(name, shape, steps, rng, dtype)
        esize = np.dtype(dtype).itemsize
        # two phases a step, each reading one array and writing the other once
        phases = 1 if name.startswith("heat_swap") else 2  # a swap loop's step is one stencil
        bound_ms = steps * phases * 2 * np.prod(shape) * esize / bw * 1e3
        row = dict(kind="time", name=name, shape=shape, steps=steps, dtype=np.dtype(dtype).name,
                   bound_ms=bound_ms)
        outs = {}
        for form in ("plain", "blocked"):
            os.environ["APPYC_TEMPORAL_3D"] = "1" if form == "blocked" else "0"
            t = [torch.tensor(x, device="cuda") if isinstance(x, np.ndarray) else x for x in args]
            init = [x.clone() if hasattr(x, "clone") else x for x in t]
            fn = getattr(mod, name)
            fn(*t)  # compiles, tunes its first step
            for _ in range(8):  # the plain kernel's tuner settles within its budget
                for x, x0 in zip(t, init):
                    if hasattr(x, "copy_"):
                        x.copy_(x0)
                fn(*t)
            outs[form] = [x.clone() for x in t if hasattr(x, "clone")]
            ts = []
            for _ in range(5):
                for x, x0 in zip(t, init):
                    if hasattr(x, "copy_"):
                        x.copy_(x0)
                ts.append(timed(lambda: fn(*t)))
            row[form + "_ms"] = statistics.median(ts)
        same = max(float((p - b).abs().max()) for p, b in zip(outs["plain"], outs["blocked"]))
        row["max_abs_blocked_vs_plain"] = same
        log(f"{name} {np.dtype(dtype).name} {shape} x {steps}: plain {row['plain_ms']:.3f} ms "
            f"({bound_ms / row['plain_ms']:.3f}x bound), blocked {row['blocked_ms']:.3f} ms "
            f"({bound_ms / row['blocked_ms']:.3f}x bound, {row['plain_ms'] / row['blocked_ms']:.2f}x plain); "
            f"max abs blocked vs plain {same:.3g}")
        recs.append(row)
    with open(os.path.join(a.out, "blocked3d_check.json"), "w") as f:
        json.dump(dict(bw=bw, recs=recs), f, indent=1, default=str)
    bad = [r for r in recs if r["kind"] == "check" and not r["ok"]]
    log(f"checks: {sum(r['kind'] == 'check' for r in recs) - len(bad)} ok, {len(bad)} wrong; total {time.time() - t0:.0f} s")


def sweep(mod, rng, bw, timed, torch, recs):
    """The natural heat_3d at 120^3 x 500 under the launcher's plan variants."""
    os.environ["APPYC_TEMPORAL_3D"] = "1"
    args = args_for("heat_3d", (120, 120, 120), 500, rng, np.float64)
    bound_ms = 500 * 2 * 2 * 120 ** 3 * 8 / bw * 1e3
    t = [torch.tensor(x, device="cuda") if isinstance(x, np.ndarray) else x for x in args]
    init = [x.clone() if hasattr(x, "clone") else x for x in t]
    ref = None
    for tile, warps, nregs in (((16, 64), 8, (112, 96, 104, 120, 128)), ((32, 64), 16, (112, 128)),
                               ((16, 128), 16, (112, 128)), ((8, 64), 4, (112, 128))):
        for nreg in nregs:
            mod._APPYC_BLOCKED_3D_TILE, mod._APPYC_BLOCKED_3D_WARPS = tile, warps
            mod._APPYC_BLOCKED_3D_MAXNREG = (nreg,)
            mod._APPYC_BLOCKED_3D_PLAN.clear()
            try:
                ts = []
                for rep in range(6):
                    for x, x0 in zip(t, init):
                        if hasattr(x, "copy_"):
                            x.copy_(x0)
                    ms = timed(lambda: mod.heat_3d(*t))
                    if rep:
                        ts.append(ms)
                out = [x.clone() for x in t if hasattr(x, "clone")]
                ref = ref or out
                same = max(float((o - r).abs().max()) for o, r in zip(out, ref))
                ms = statistics.median(ts)
                slots = list(mod._APPYC_BLOCKED_3D_PLAN.values())
                log(f"sweep tile {tile} warps {warps} maxnreg {nreg}: {ms:.3f} ms, {bound_ms / ms:.3f}x bound, "
                    f"resident programs {slots}, max abs vs first {same:.3g}")
                recs.append(dict(kind="sweep", tile=tile, warps=warps, maxnreg=nreg, ms=ms,
                                 xbound=bound_ms / ms, same=same))
            except Exception as e:
                log(f"sweep tile {tile} warps {warps} maxnreg {nreg}: FAILED {type(e).__name__}: {str(e)[:300]}")


if __name__ == "__main__":
    main()
