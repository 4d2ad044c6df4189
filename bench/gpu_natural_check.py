#!/usr/bin/env python3
"""The time loops of samples/natural_loops.py on the GPU: the one-launch persistent form (grid
barriers, registers, swaps by slot index, reductions through slots, while loops), which the
interpreter's one-launch-per-phase form in the difftests does not run. Each function at a size
where its loop runs many iterations, against a vectorised NumPy version of the same math, then
timed (median of steady-state calls) beside JAX written as a JAX user writes it
(`lax.fori_loop`, `lax.while_loop`) where one is given here.

  here:    target/release/appyc samples/natural_loops.py -o gen_natural/natural_loops.py
  the GPU: python3 bench/gpu_natural_check.py --module gen_natural/natural_loops.py
"""
import argparse
import importlib.util
import os
import statistics
import sys
import time

import numpy as np


def load(path):
    spec = importlib.util.spec_from_file_location("natural_loops_gen", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------- the math in NumPy
def np_yee(ex, ey, hz, fict, T):
    for t in range(T):
        ey[0, :] = fict[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def np_reflecting(A, B, N, T):
    for t in range(T):
        B[1:N - 1] = 0.25 * A[:N - 2] + 0.5 * A[1:N - 1] + 0.25 * A[2:]
        B[0] = B[1]
        B[N - 1] = B[N - 2]
        A[:] = B


def np_wave(u, v, N, T, dt, decay):
    for t in range(T):
        v[1:N - 1] = v[1:N - 1] + dt * (u[:N - 2] - 2.0 * u[1:N - 1] + u[2:])
        u[:] = u + dt * v
        dt = dt * decay
    return dt


def np_swap(A, B, N, T):
    for t in range(T):
        B[1:N - 1] = (A[:N - 2] + A[1:N - 1] + A[2:]) / 3.0
        B[0] = A[0]
        B[N - 1] = A[N - 1]
        A, B = B, A
    return A


def np_counted(A, N, T):
    steps = 0
    idx = np.arange(N)
    for t in range(T):
        w = 1.0 / (t + 1 + steps)
        A[:] = A * (1.0 - w) + w * idx
        steps += 1
    return steps


def np_relax(A, B, N, tol, max_iter):
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        B[1:N - 1] = 0.25 * A[:N - 2] + 0.5 * A[1:N - 1] + 0.25 * A[2:]
        diff = float(np.max(np.abs(B[1:N - 1] - A[1:N - 1]))) if N > 2 else 0.0
        A, B = B, A
        it += 1
    return it


def np_relax_break(A, B, N, tol, max_iter):
    diff = 0.0
    for it in range(max_iter):
        B[1:N - 1] = 0.25 * A[:N - 2] + 0.5 * A[1:N - 1] + 0.25 * A[2:]
        diff = float(np.max(np.abs(B[1:N - 1] - A[1:N - 1])))
        A[1:N - 1] = B[1:N - 1]
        if diff < tol:
            break
    return diff


# ---------------------------------------------------------------- JAX, as a JAX user writes it
def jax_peers():
    import jax
    import jax.numpy as jnp
    from jax import lax
    jax.config.update("jax_enable_x64", True)

    @jax.jit
    def wave(u, v, dt, decay, T):
        def step(_, s):
            u, v, dt = s
            v = v.at[1:-1].set(v[1:-1] + dt * (u[:-2] - 2.0 * u[1:-1] + u[2:]))
            u = u + dt * v
            return u, v, dt * decay
        return lax.fori_loop(0, T, step, (u, v, dt))

    @jax.jit
    def relax(A, B, tol, max_iter):
        def cond(s):
            _, _, diff, it = s
            return (diff > tol) & (it < max_iter)

        def body(s):
            A, B, _, it = s
            B = B.at[1:-1].set(0.25 * A[:-2] + 0.5 * A[1:-1] + 0.25 * A[2:])
            diff = jnp.max(jnp.abs(B[1:-1] - A[1:-1]))
            return B, A, diff, it + 1
        return lax.while_loop(cond, body, (A, B, tol + 1.0, 0))

    @jax.jit
    def yee(ex, ey, hz, fict, T):
        def step(t, s):
            ex, ey, hz = s
            ey = ey.at[0, :].set(fict[t])
            ey = ey.at[1:, :].add(-0.5 * (hz[1:, :] - hz[:-1, :]))
            ex = ex.at[:, 1:].add(-0.5 * (hz[:, 1:] - hz[:, :-1]))
            hz = hz.at[:-1, :-1].add(-0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1]))
            return ex, ey, hz
        return lax.fori_loop(0, T, step, (ex, ey, hz))

    @jax.jit
    def swap(A, B, T):
        def step(_, s):
            A, B = s
            B = B.at[1:-1].set((A[:-2] + A[1:-1] + A[2:]) / 3.0)
            B = B.at[0].set(A[0]).at[-1].set(A[-1])
            return B, A
        return lax.fori_loop(0, T, step, (A, B))
    return jax, dict(wave=wave, relax=relax, yee=yee, swap=swap)


def timed(fn, sync, reps):
    times = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def close(name, expected, actual, rtol=1e-9, atol=1e-9):
    actual = np.asarray(actual.detach().cpu().numpy() if hasattr(actual, "detach") else actual)
    ok = np.allclose(actual, expected, rtol=rtol, atol=atol)
    err = float(np.max(np.abs(actual - expected))) if np.size(expected) else 0.0
    print(f"    {name}: {'ok' if ok else 'MISMATCH'} (max abs diff {err:.3g})", flush=True)
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", required=True)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    import torch
    mod = load(a.module)
    dev = torch.device("cuda")
    print(torch.cuda.get_device_name(0), flush=True)
    sync = torch.cuda.synchronize
    try:
        jax, jx = jax_peers()
    except Exception as e:  # noqa: BLE001
        print(f"no JAX: {e}")
        jax, jx = None, {}
    rng = np.random.default_rng(7)
    all_ok = True
    T = lambda x: torch.tensor(x, device=dev)  # noqa: E731

    def case(title, np_fn, gen_fn, args, writes, ret_check=True, jax_fn=None, jax_args=None):
        nonlocal all_ok
        print(f"== {title}", flush=True)
        ref = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
        t0 = time.perf_counter()
        ref_ret = np_fn(*ref)
        print(f"    numpy {time.perf_counter() - t0:.2f} s", flush=True)
        targs = [T(x) if isinstance(x, np.ndarray) else x for x in args]
        t0 = time.perf_counter()
        ret = gen_fn(*targs)
        sync()
        print(f"    appyc first call {time.perf_counter() - t0:.2f} s", flush=True)
        for k in writes:
            all_ok &= close(f"arg {k}", ref[k], targs[k])
        if ret_check and ref_ret is not None:
            if isinstance(ref_ret, np.ndarray):
                all_ok &= close("return", ref_ret, ret)
            else:
                ok = abs(float(ret) - float(ref_ret)) <= 1e-9 * max(1.0, abs(float(ref_ret)))
                print(f"    return {ret!r} vs {ref_ret!r}: {'ok' if ok else 'MISMATCH'}", flush=True)
                all_ok &= ok
        pristine = [x.clone() if hasattr(x, "clone") else x for x in [T(x) if isinstance(x, np.ndarray) else x for x in args]]

        def again():
            for d, s in zip(targs, pristine):
                if hasattr(d, "copy_"):
                    d.copy_(s)
            gen_fn(*targs)
        t_appyc = timed(again, sync, a.reps)
        line = f"    appyc {t_appyc * 1e3:.3f} ms"
        if jax_fn is not None and jax is not None:
            jargs = jax_args()
            out = jax_fn(*jargs)
            jax.block_until_ready(out)
            t_jax = timed(lambda: jax.block_until_ready(jax_fn(*jargs)), lambda: None, a.reps)
            line += f"   JAX {t_jax * 1e3:.3f} ms   appyc/JAX speed-up {t_jax / t_appyc:.2f}x"
        print(line, flush=True)

    jnp = None if jax is None else jax.numpy

    def J(*xs):  # inputs for JAX, fresh each call
        return lambda: [jnp.asarray(x) if isinstance(x, np.ndarray) else x for x in xs]

    M, Nc, Ty = 1000, 1200, 500
    ex, ey, hz, fict = (rng.random((M, Nc)), rng.random((M, Nc)), rng.random((M, Nc)),
                        rng.random(Ty))
    case("yee_natural (fdtd_2d, bare source row; paper size)", np_yee, mod.yee_natural,
         [ex, ey, hz, fict, Ty], writes=[0, 1, 2],
         jax_fn=jx.get("yee"), jax_args=J(ex, ey, hz, fict, Ty))
    n = 100_003
    case("reflecting_ends (bare element and slice statements)", np_reflecting,
         mod.reflecting_ends, [rng.random(n), rng.random(n), n, 200], writes=[0, 1])
    n, tw = 1 << 20, 1000
    u, v = rng.random(n), rng.random(n)
    case("decaying_wave (dt = dt * decay each step; 2^20 points, 1000 steps)", np_wave,
         mod.decaying_wave, [u, v, n, tw, 0.01, 0.999], writes=[0, 1],
         jax_fn=jx.get("wave") and (lambda u, v: jx["wave"](u, v, 0.01, 0.999, tw)),
         jax_args=J(u, v))
    n = 1_000_003
    A, B = rng.random(n), rng.random(n)
    case("swap_smooth (A, B = B, A; 10^6 points, 101 steps)", np_swap, mod.swap_smooth,
         [A, B, n, 101], writes=[0, 1],
         jax_fn=jx.get("swap") and (lambda A, B: jx["swap"](A, B, 101)), jax_args=J(A, B))
    n = 100_003
    case("counted_steps (a counter and a per-step scalar)", np_counted, mod.counted_steps,
         [rng.random(n), n, 300], writes=[0])
    n = 1 << 16
    A, B = rng.random(n), rng.random(n)
    B[0], B[-1] = A[0], A[-1]
    case("relax_to_tolerance (while diff > tol and it < max_iter; 2^16 points, 3000 iterations)",
         np_relax, mod.relax_to_tolerance, [A, B, n, 0.0, 3000], writes=[0, 1],
         jax_fn=jx.get("relax") and (lambda A, B: jx["relax"](A, B, 0.0, 3000)), jax_args=J(A, B))
    A, B = rng.random(n), rng.random(n)
    B[0], B[-1] = A[0], A[-1]
    case("relax_to_tolerance (stops at its tolerance)", np_relax, mod.relax_to_tolerance,
         [A, B, n, 2e-3, 100000], writes=[0, 1])
    A, B = rng.random(n), rng.random(n)
    case("relax_until_small (for + break, reduction(max:diff))", np_relax_break,
         mod.relax_until_small, [A, B, n, 2e-3, 100000], writes=[0, 1])
    print("ALL OK" if all_ok else "SOME MISMATCH", flush=True)
    sys.exit(0 if all_ok else 1)


if __name__ == "__main__":
    main()
