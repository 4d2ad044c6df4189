"""Checks the 1-D temporally blocked Gluon kernels (codegen/triton/blocked.rs) on a GPU, then
times them. Correctness: every 1-D blocked function of samples/time_loops.py,
samples/natural_loops.py and samples/distribute_stencils.py at sizes around the chunks' edges
(Gluon: width 512 up to 2^16 elements, 2048 past) and step counts around a group's, float64 and
float32: the Gluon kernel (default) against the plain persistent kernel (APPYC_TEMPORAL=0,
APPYC_AUTOTUNE=0) and, at the sizes Python loops can run, NumPy on the unchanged source. Times:
wave_decay (2^20 x 1000, inputs uniform and normal) and jacobi_1d (32000 x 4000, NPBench
`paper`) with the Gluon kernel and the plain persistent kernel (untuned), and a 1 GiB copy's
bandwidth. `--twin` also runs the Triton twin on the GPU (a stand-in launcher below: the
generated launcher runs it only under the interpreter).

    python3 bench/gpu_blocked1d_check.py --modules DIR [--json FILE]

DIR holds appyc's output for the three samples (time_loops.py, natural_loops.py,
distribute_stencils.py) and for scripts/npbench_natural/wave_decay.py and
scripts/npbench/jacobi_1d.py.
"""
import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# (sample, function, arguments from (rng, n, steps, dtype)): arrays first as NumPy
CASES = [
    ("time_loops", "jacobi_1d", lambda r, n, t, d: [r.random(n).astype(d), r.random(n).astype(d), n, t]),
    ("time_loops", "smooth_1d_slices",
     lambda r, n, t, d: [r.random(n).astype(d), r.random(n).astype(d), 0.3, n, t]),
    ("natural_loops", "decaying_wave",
     lambda r, n, t, d: [r.random(n).astype(d), (0.1 * r.random(n)).astype(d), n, t, 0.4, 0.999]),
    ("natural_loops", "counted_from", lambda r, n, t, d: [r.random(n).astype(d), n, t, 3]),
    ("natural_loops", "offset_counter", lambda r, n, t, d: [r.random(n).astype(d), n, t]),
    ("distribute_stencils", "three_sweeps",
     lambda r, n, t, d: [r.random(n).astype(d), r.random(n).astype(d), r.random(n).astype(d), n, t]),
]


# around the Gluon chunks' edges (width 512, group 32 up to 2^16; 2048 and 64 past) and groups
SIZES = [(37, 5), (1789, 64), (1790, 65), (1791, 130), (65536, 63), (65537, 129), (1_000_003, 70)]


def to_device(args):
    return [torch.from_numpy(a.copy()).cuda() if isinstance(a, np.ndarray) else a for a in args]


def run(fn, args, env):
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        dev = to_device(args)
        ret = fn(*dev)
        torch.cuda.synchronize()
        return [a.cpu().numpy() for a in dev if isinstance(a, torch.Tensor)], ret
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def diff(a, b):
    """The largest difference of any written array or the returned value, relative to the
    largest magnitude of `b`'s (some loops grow their values: three_sweeps reaches 1e9 in
    float32, where rounding alone differs by 1e2), and whether the returned types agree."""
    def rel(x, y):
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        return float(np.max(np.abs(x - y))) / max(float(np.max(np.abs(y))), 1e-300)
    arrays = max((rel(x, y) for x, y in zip(a[0], b[0])), default=0.0)
    ret = rel(a[1], b[1]) if a[1] is not None else 0.0
    return max(arrays, ret), type(a[1]) is type(b[1])


def check(mods, srcs, records):
    failed = 0
    for sample, func, make in CASES:
        fn, src = getattr(mods[sample], func), getattr(srcs[sample], func)
        taken = []
        blocked = mods[sample]._appyc_blocked
        if not getattr(blocked, "_recording", False):
            def recording(*a, _b=blocked, **k):
                out = _b(*a, **k)
                taken.append(out is not None)
                return out
            recording._recording = True
            mods[sample]._appyc_blocked = recording
        for dtype in (np.float64, np.float32):
            for n, steps in SIZES:
                rng = np.random.default_rng(n * 7 + steps)
                args = make(rng, n, steps, dtype)
                taken.clear()
                gluon = run(fn, args, {})
                path = "blocked" if taken and taken[0] else "plain"
                plain = run(fn, args, {"APPYC_TEMPORAL": "0", "APPYC_AUTOTUNE": "0"})
                d_plain, same_type = diff(gluon, plain)
                d_ref = None
                if n * steps <= 250_000:
                    ref_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
                    ret = src(*ref_args)
                    d_ref, same_type2 = diff(gluon, ([a for a in ref_args if isinstance(a, np.ndarray)], ret))
                    same_type &= same_type2
                tol = 1e-12 if dtype == np.float64 else 1e-5
                ok = path == "blocked" and d_plain <= tol and same_type and (d_ref is None or d_ref <= tol * 100)
                failed += not ok
                line = (f"{'ok  ' if ok else 'FAIL'} {sample}.{func} {np.dtype(dtype).name} N={n} steps={steps} "
                        f"{path}: relative difference vs plain {d_plain:.2g}, vs NumPy {'-' if d_ref is None else f'{d_ref:.2g}'}")
                print(line, flush=True)
                records.append({"case": f"{sample}.{func}", "dtype": np.dtype(dtype).name, "n": n,
                                "steps": steps, "path": path, "vs_plain": d_plain, "vs_numpy": d_ref, "ok": ok})
    print(f"{failed} failed", flush=True)
    return failed


def timed(call, reps=7):
    call()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        call()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return sorted(times)[reps // 2] * 1e3


def copy_bandwidth():
    src = torch.empty(1 << 27, dtype=torch.float64, device="cuda")
    dst = torch.empty_like(src)
    ms = timed(lambda: dst.copy_(src), reps=11)
    return 2 * src.numel() * 8 / (ms * 1e-3) / 1e9


def with_env(env, call):
    keys = ("APPYC_TEMPORAL", "APPYC_AUTOTUNE", "APPYC_TWIN")
    old = {k: os.environ.get(k) for k in keys}
    for k in keys:
        os.environ.pop(k, None)
    os.environ.update(env)
    try:
        return call()
    finally:
        for k, v in old.items():
            os.environ.pop(k, None)
            if v is not None:
                os.environ[k] = v


def twin_launcher(mod):
    """`_appyc_blocked` with the twin on the GPU at its old plan (width 1024 past 2^16
    elements, 512 below; group 32), when APPYC_TWIN=1."""
    original = mod._appyc_blocked

    def launch(twin, kernel, steps, arrays, scalars, reach, state=None, kinds=""):
        if os.environ.get("APPYC_TWIN") != "1":
            return original(twin, kernel, steps, arrays, scalars, reach, state, kinds)
        n = arrays[0].shape[0]
        width, group = (512 if n <= 1 << 16 else 1024), 32
        while group > 1 and 4 * reach * group > width:
            group //= 2
        halo = reach * group
        chunk = width - 2 * halo
        chunks, groups = -(-n // chunk), -(-steps // group)
        dev = arrays[0].device
        out = torch.empty(max(len(state or ()), 1), dtype=torch.float64, device=dev)
        sync = torch.zeros(1, dtype=torch.int64, device=dev)
        tail = (sync,) if state is None else (sync, *state, out)
        scratch = [torch.empty(chunks * width, dtype=a.dtype, device=dev) for a in arrays]
        args = (*arrays, *scratch, *scalars, n, steps, chunk, chunks, 0, groups, *tail)
        consts = dict(G=group, W=width, HALO=halo, COMPUTE=True, WRITE=True, GRID_SYNC=True)
        compiled = twin.warmup(*args, grid=(1,), **consts, num_warps=4, launch_cooperative_grid=True)
        compiled._init_handles()
        props = torch.cuda.get_device_properties(dev)
        grid = min(chunks, mod._appyc_programs_per_sm(compiled, 4, props) * props.multi_processor_count)
        twin[(grid,)](*args, **consts, num_warps=4, launch_cooperative_grid=True)
        return [] if state is None else [float(v) if k == "f" else int(v) for v, k in zip(out.tolist(), kinds)]
    mod._appyc_blocked = launch


def times(mods, records, twin):
    bw = copy_bandwidth()
    print(f"copy bandwidth {bw:.0f} GB/s", flush=True)
    wave, jac = mods["wave_decay"], mods["jacobi_1d"]
    if twin:
        twin_launcher(wave)
        twin_launcher(jac)
    cases = []
    for dtype in (torch.float64, torch.float32):
        n, steps = 1 << 20, 1000
        gen = torch.Generator(device="cuda").manual_seed(0)
        for draw in ("rand", "randn"):
            make = getattr(torch, draw)
            u0 = make(n, dtype=dtype, device="cuda", generator=gen)
            v0 = 0.1 * make(n, dtype=dtype, device="cuda", generator=gen)
            # bytes a step: u and v read and written once each
            cases.append((f"wave_decay {str(dtype)[6:]} 2^20 x 1000 ({draw})", 4 * n * u0.element_size() * steps,
                          lambda u0=u0, v0=v0, steps=steps: wave.wave_decay(steps, u0.clone(), v0.clone(), 0.4, 0.999)))
        n, steps = 32000, 4000
        a0 = torch.rand(n, dtype=dtype, device="cuda")
        b0 = torch.rand(n, dtype=dtype, device="cuda")
        cases.append((f"jacobi_1d {str(dtype)[6:]} 32000 x 4000", 4 * n * a0.element_size() * steps,
                      lambda a0=a0, b0=b0, steps=steps: jac.jacobi_1d(steps, a0.clone(), b0.clone())))
    variants = [("gluon", {}), ("plain", {"APPYC_TEMPORAL": "0", "APPYC_AUTOTUNE": "0"})]
    if twin:
        variants.append(("twin", {"APPYC_TWIN": "1"}))
    for name, nbytes, call in cases:
        row = {"case": name}
        for variant, env in variants:
            row[variant] = with_env(env, lambda: timed(call))
        bound = nbytes / (bw * 1e9) * 1e3
        row["bound_ms"] = bound
        text = ", ".join(f"{v} {row[v]:.3f} ms" for v, _ in variants)
        print(f"{name}: {text}; streaming bound {bound:.3f} ms: gluon {bound / row['gluon']:.2f}x the bound,"
              f" {row['plain'] / row['gluon']:.2f}x plain", flush=True)
        records.append(row)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--modules", required=True)
    p.add_argument("--json")
    p.add_argument("--twin", action="store_true", help="time the Triton twin on the GPU too")
    p.add_argument("--no-check", action="store_true")
    a = p.parse_args()
    sys.path.insert(0, str(ROOT / "samples"))
    mods = {name: load(Path(a.modules) / f"{name}.py", f"gen_{name}")
            for name in ("time_loops", "natural_loops", "distribute_stencils", "wave_decay", "jacobi_1d")}
    srcs = {name: load(ROOT / "samples" / f"{name}.py", f"src_{name}")
            for name in ("time_loops", "natural_loops", "distribute_stencils")}
    records = []
    failed = 0 if a.no_check else check(mods, srcs, records)
    times(mods, records, a.twin)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(records, f, indent=1)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
