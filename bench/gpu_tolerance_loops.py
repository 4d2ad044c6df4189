#!/usr/bin/env python3
"""Issue 23, relaxations to a tolerance as users write them, before and after
`passes/join_regions.rs` (the convergence test joins the sweep; join_reductions.rs when run) and the private accumulator
of a reduction inside a worker's loop (`passes/shared_scalars.rs`), against the clause form and
JAX's `lax.while_loop`, in one process.

Cases:
- relax_1d: relax_tol's sweep at its `paper` size (N = 2^16, 3000 sweeps), the test bare
  (bench/sources/relax_np.py) or by `reduction(max:diff)` (scripts/npbench_natural/relax_tol.py);
- jacobi_2d: a 5-point Jacobi sweep on N x N (bench/sources/jacobi2d_np.py, bare test;
  jacobi2d_clause.py, the clause on the row loop), tol set between the largest changes of the
  reference's sweeps K - 1 and K so that every correct implementation stops at sweep K.

Every implementation's sweep count and arrays are checked against NumPy (relax_1d: the
whole-array math of bench_npbench, which the `small` size checks against the source; jacobi_2d:
the whole-array NumPy sweep in the source's order of operations). Calls are timed as
bench_npbench.py times them (restore, synchronise, call, synchronise), the appyc modules
alternating over rounds; first calls tune into an empty cache of their own.

    python bench/gpu_tolerance_loops.py --new DIR --old DIR --out OUT
    (DIR: appyc's outputs relax_np.py, relax_tol.py, jacobi2d_np.py, jacobi2d_clause.py)
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import bench_npbench as nb  # noqa: E402


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def jacobi2d_sweep(np, A, B):
    """One sweep of the source's math, whole arrays, the source's order of additions."""
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
    return float(np.max(np.abs(B[1:-1, 1:-1] - A[1:-1, 1:-1])))


def jacobi2d_reference(np, A, B, tol, max_iter):
    diff, it = tol + 1.0, 0
    while diff > tol and it < max_iter:
        diff = jacobi2d_sweep(np, A, B)
        A, B = B, A
        it += 1
    return it


def jacobi2d_jax():
    import jax
    import jax.numpy as jnp

    def run(A, B, tol, max_iter):
        def cond(s):
            return (s[2] > tol) & (s[3] < max_iter)

        def body(s):
            A, B, _, it = s
            B = B.at[1:-1, 1:-1].set(
                0.2 * (A[1:-1, 1:-1] + A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]))
            diff = jnp.max(jnp.abs(B[1:-1, 1:-1] - A[1:-1, 1:-1]))
            return B, A, diff, it + 1
        A, B, _, it = jax.lax.while_loop(cond, body, (A, B, jnp.asarray(tol + 1.0), 0))
        return A, B, it
    return jax.jit(run)


def relax_jax():
    import jax
    impl = nb.jax_impl("relax_tol")
    fn = jax.jit(impl[1] if isinstance(impl, tuple) else impl)

    def run(A, B, tol, max_iter):
        res = fn(A, B, tol, max_iter)
        return res[0], res[1], res[2]
    return run


def case_inputs(np, name, a):
    """(A0, B0, tol, max_iter, reference (A, B, sweeps), what the reference is)."""
    if name == "relax_1d":
        small = dict(nb.make_inputs("relax_tol", "small"))
        src_A, src_B, math_A, math_B = (small[k].copy() for k in ("A", "B", "A", "B"))
        src = load(Path(__file__).resolve().parent / "sources" / "relax_np.py", "relax_np_src")
        src_it = src.relax_np(src_A, src_B, small["tol"], small["max_iter"])
        math_it = nb.NATURAL_MATH["relax_tol"](math_A, math_B, small["tol"], small["max_iter"])
        assert src_it == math_it and np.array_equal(src_A, math_A) and np.array_equal(src_B, math_B)
        args = dict(nb.make_inputs("relax_tol", "paper"))
        A0, B0, tol, max_iter = args["A"], args["B"], args["tol"], args["max_iter"]
        A, B = A0.copy(), B0.copy()
        it = nb.NATURAL_MATH["relax_tol"](A, B, tol, max_iter)
        return A0, B0, tol, max_iter, (A, B, it), "bench_npbench's math (the source agrees at `small`)"
    n, k = a.n2d, a.sweeps2d
    rng = np.random.default_rng(11)
    A0 = rng.random((n, n))
    B0 = A0.copy()
    A, B = A0.copy(), B0.copy()
    diffs = []
    for _ in range(k):
        diffs.append(jacobi2d_sweep(np, A, B))
        A, B = B, A
    assert diffs[k - 1] < diffs[k - 2], "the changes do not shrink"
    tol = (diffs[k - 1] + diffs[k - 2]) / 2
    A, B = A0.copy(), B0.copy()
    it = jacobi2d_reference(np, A, B, tol, 4 * k)
    assert it == k, (it, k)
    return A0, B0, tol, 4 * k, (A, B, it), "whole-array NumPy in the source's order"


def run_case(name, a, say):
    import numpy as np
    import torch
    t = time.perf_counter()
    A0, B0, tol, max_iter, (ref_A, ref_B, ref_it), what = case_inputs(np, name, a)
    say(f"== {name}: A {A0.shape}; reference ({what}) {ref_it} sweeps, {time.perf_counter() - t:.1f} s")
    dev = {"A": torch.from_numpy(A0).cuda(), "B": torch.from_numpy(B0).cuda()}
    pristine = {k: v.clone() for k, v in dev.items()}

    def restore():
        for k in dev:
            dev[k].copy_(pristine[k])

    def check(it, A, B):
        return bool(it == ref_it and np.allclose(A, ref_A, rtol=1e-12, atol=1e-12)
                    and np.allclose(B, ref_B, rtol=1e-12, atol=1e-12))

    files = {"relax_1d": ("relax_np", "relax_tol"), "jacobi_2d": ("jacobi2d_np", "jacobi2d_clause")}[name]
    impls, mods = {}, {}
    for build, folder in (("new", a.new), ("old", a.old)):
        for form, stem in zip(("bare np.max", "clause"), files):
            file = stem + (a.bare_suffix if form == "bare np.max" else "")
            mod = load(Path(folder) / f"{file}.py", f"{name}_{build}_{file}")
            fn = getattr(mod, stem)
            impls[f"appyc {build}, {form}"] = (lambda fn=fn: fn(dev["A"], dev["B"], tol, max_iter))
            mods[f"appyc {build}, {form}"] = mod
    results = {"sweeps": ref_it, "shape": list(A0.shape), "impls": {}}
    caches = {k: tempfile.mkdtemp(prefix="appyc_") for k in impls}
    for key, fn in impls.items():
        os.environ["APPYC_CACHE_DIR"] = caches[key]
        restore()
        torch.cuda.synchronize()
        t = time.perf_counter()
        it = fn()
        torch.cuda.synchronize()
        first = time.perf_counter() - t
        ok = check(int(it), dev["A"].cpu().numpy(), dev["B"].cpu().numpy())
        results["impls"][key] = {"first_s": first, "ok": ok, "sweeps": int(it)}
        say(f"{key}: first call {first:.2f} s, {int(it)} sweeps, {'correct' if ok else 'WRONG'}")
    times = {k: [] for k in impls}
    deadline = time.perf_counter() + a.case_budget
    for r in range(a.rounds):
        if time.perf_counter() > deadline:
            say(f"budget: {r} rounds")
            break
        for key in (list(impls) if r % 2 == 0 else list(impls)[::-1]):
            os.environ["APPYC_CACHE_DIR"] = caches[key]
            for _ in range(a.reps):
                restore()
                torch.cuda.synchronize()
                t = time.perf_counter()
                impls[key]()
                torch.cuda.synchronize()
                times[key].append((time.perf_counter() - t) * 1e3)
    for key, ts in times.items():
        results["impls"][key]["ms"] = statistics.median(ts)
        results["impls"][key]["calls"] = len(ts)
        # What each build's tuner chose in this process: a slow build shows whether its pick did it.
        results["impls"][key]["tuning"] = nb.tuning_choices(mods[key])
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        fn = relax_jax() if name == "relax_1d" else jacobi2d_jax()
        jA, jB = jnp.asarray(A0), jnp.asarray(B0)
        t = time.perf_counter()
        res = jax.block_until_ready(fn(jA, jB, tol, max_iter))
        first = time.perf_counter() - t
        ok = check(int(res[2]), np.asarray(res[0]), np.asarray(res[1]))
        ts = []
        for _ in range(a.reps * 2):
            t = time.perf_counter()
            jax.block_until_ready(fn(jA, jB, tol, max_iter))
            ts.append((time.perf_counter() - t) * 1e3)
        results["impls"]["JAX jit"] = {"first_s": first, "ok": ok, "sweeps": int(res[2]),
                                       "ms": statistics.median(ts), "calls": len(ts)}
    except Exception as e:  # noqa: BLE001 (a missing peer is reported, not fatal)
        say(f"JAX: {type(e).__name__}: {e}")
    for key, r in results["impls"].items():
        say(f"{key:26s} {r['ms']:9.3f} ms ({r['calls']} calls; first {r['first_s']:.2f} s; "
            f"{'correct' if r['ok'] else 'WRONG'})")
    return results


def main(a):
    import torch
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "tolerance_loops.log", "a")

    def say(text):
        print(text, flush=True)
        log.write(text + "\n")
        log.flush()

    say(f"device {torch.cuda.get_device_name()}")
    results = {"device": torch.cuda.get_device_name()}
    for name in a.cases:
        results[name] = run_case(name, a, say)
        (out / "tolerance_loops.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--new", required=True)
    p.add_argument("--old", required=True)
    p.add_argument("--cases", nargs="+", default=["relax_1d", "jacobi_2d"])
    p.add_argument("--n2d", type=int, default=2000)
    p.add_argument("--bare-suffix", default="",
                   help="the bare test's module is STEM + this (`_open`: sources/*_open.py, open slices)")
    p.add_argument("--sweeps2d", type=int, default=500)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--case-budget", type=float, default=90)
    p.add_argument("--out", default="tolerance_loops_out")
    main(p.parse_args())
