#!/usr/bin/env python3
"""Issue 23, programs as users write them: a relaxation to a tolerance whose convergence test is
NumPy code, `diff = np.max(np.abs(B[1:N-1] - A[1:N-1]))` bare in the `while` (bench/sources/
relax_np.py), against the natural set's relax_tol (the same sweep, `diff` reduced by
`reduction(max:diff)`) and JAX's `lax.while_loop`, at relax_tol's `paper` size, in one process.

Every implementation's sweep count and arrays are checked against NumPy's run of the source.
Calls are timed as bench_npbench.py times them (restore, synchronise, call, synchronise); the
first call of each appyc module includes its compile and tuning (each tunes into an empty cache
of its own).

    python bench/gpu_bare_reduction.py --modules DIR --bare FILE --out OUT   (DIR: bench_npbench --generate)
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


def main(a):
    import numpy as np
    import torch
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "bare_reduction.log", "a")

    def say(text):
        print(text, flush=True)
        log.write(text + "\n")
        log.flush()

    # The source (a Python loop per sweep) against relax_tol's whole-array NumPy math at the
    # `small` size; at the timed size the math is the reference, as in bench_npbench.
    small = dict(nb.make_inputs("relax_tol", "small"))
    src_A, src_B, math_A, math_B = (small[k].copy() for k in ("A", "B", "A", "B"))
    src_it = load(Path(a.bare), "relax_np_src").relax_np(src_A, src_B, small["tol"], small["max_iter"])
    math_it = nb.NATURAL_MATH["relax_tol"](math_A, math_B, small["tol"], small["max_iter"])
    assert src_it == math_it and np.array_equal(src_A, math_A) and np.array_equal(src_B, math_B)
    args = dict(nb.make_inputs("relax_tol", a.size))
    A0, B0, tol, max_iter = args["A"], args["B"], args["tol"], args["max_iter"]
    ref_A, ref_B = A0.copy(), B0.copy()
    t = time.perf_counter()
    ref_it = nb.NATURAL_MATH["relax_tol"](ref_A, ref_B, tol, max_iter)
    say(f"device {torch.cuda.get_device_name()}; N={A0.size}; NumPy {ref_it} sweeps "
        f"in {time.perf_counter() - t:.2f} s; the source agrees with the math at the small size")
    results = {"sweeps": ref_it, "impls": {}}
    dev = {"A": torch.from_numpy(A0).cuda(), "B": torch.from_numpy(B0).cuda()}
    pristine = {k: v.clone() for k, v in dev.items()}

    def restore():
        for k in dev:
            dev[k].copy_(pristine[k])

    def check(it, A, B):
        ok = it == ref_it and np.allclose(A, ref_A, rtol=1e-12, atol=1e-12) \
            and np.allclose(B, ref_B, rtol=1e-12, atol=1e-12)
        return bool(ok)

    impls = {}
    bare = load(Path(a.bare_module), "relax_np_gen")
    clause = nb.load_appyc_module(a.modules, "relax_tol.natural", "appyc")
    impls["appyc, bare np.max"] = lambda: bare.relax_np(dev["A"], dev["B"], tol, max_iter)
    impls["appyc, reduction(max:diff)"] = lambda: clause.relax_tol(dev["A"], dev["B"], tol, max_iter)
    caches = {name: tempfile.mkdtemp(prefix="appyc_") for name in impls}
    for name, fn in impls.items():
        os.environ["APPYC_CACHE_DIR"] = caches[name]
        restore()
        torch.cuda.synchronize()
        t = time.perf_counter()
        it = fn()
        torch.cuda.synchronize()
        first = time.perf_counter() - t
        ok = check(int(it), dev["A"].cpu().numpy(), dev["B"].cpu().numpy())
        results["impls"][name] = {"first_s": first, "ok": ok, "sweeps": int(it)}
        say(f"{name}: first call {first:.2f} s, {int(it)} sweeps, {'correct' if ok else 'WRONG'}")
    # Steady state, the two appyc modules alternating.
    times = {name: [] for name in impls}
    for r in range(a.rounds):
        for name in (list(impls) if r % 2 == 0 else list(impls)[::-1]):
            os.environ["APPYC_CACHE_DIR"] = caches[name]
            for _ in range(a.reps):
                restore()
                torch.cuda.synchronize()
                t = time.perf_counter()
                impls[name]()
                torch.cuda.synchronize()
                times[name].append((time.perf_counter() - t) * 1e3)
    for name, ts in times.items():
        results["impls"][name]["ms"] = statistics.median(ts)
        results["impls"][name]["calls"] = len(ts)
    # JAX, lax.while_loop (bench_npbench's peer).
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        impl = nb.jax_impl("relax_tol")
        fn = jax.jit(impl[1] if isinstance(impl, tuple) else impl)
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
    base = results["impls"]["appyc, reduction(max:diff)"]["ms"]
    for name, r in results["impls"].items():
        say(f"{name:28s} {r['ms']:9.3f} ms  ({r['calls']} calls; first {r['first_s']:.2f} s; "
            f"{'correct' if r['ok'] else 'WRONG'}); over the clause form {r['ms'] / base:.3f}")
    (out / "bare_reduction.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--modules", required=True)
    p.add_argument("--bare", default=str(Path(__file__).resolve().parent / "sources" / "relax_np.py"))
    p.add_argument("--bare-module", required=True, help="appyc's output for --bare")
    p.add_argument("--size", default="paper")
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--out", default="bare_reduction_out")
    main(p.parse_args())
