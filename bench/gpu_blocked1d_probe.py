"""Probe (issue 23/25): a 1-D temporally blocked stencil loop whose chunk lives in shared memory
(Gluon) against today's blocked kernel, whose chunk lives in a global scratch
(codegen/triton/blocked.rs) and so round-trips through the L2 every phase.

Usage: python bench/gpu_blocked1d_probe.py GEN_MODULE.py GLUON_MODULE.py [--n N] [--steps T]
GEN_MODULE: appyc's output (at fb8f071, before the Gluon kernel) for
scripts/npbench_natural/wave_decay.py; GLUON_MODULE: bench/blocked1d_probe/wave_gluon.py, a
hand-written Gluon kernel `wave_gluon` with the twin's signature plus `R`, the guard.
Every variant's u, v and dt are compared with the generated module's (max abs difference).
"""
import argparse
import importlib.util
import json
import time

import torch


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_gluon(gen, kernel, steps, v, u, dt, decay, width, group, warps):
    n = u.shape[0]
    reach = 2
    halo = reach * group
    chunk = width - 2 * halo
    chunks = -(-n // chunk)
    groups = -(-steps // group)
    dev = u.device
    scratch = [torch.empty(chunks * width, dtype=a.dtype, device=dev) for a in (v, u)]
    sync = torch.zeros(1, dtype=torch.int64, device=dev)
    out = torch.empty(1, dtype=torch.float64, device=dev)
    args = (v, u, *scratch, n, float(decay), n, steps, chunk, chunks)
    consts = dict(G=group, W=width, HALO=halo, R=1, COMPUTE=True, WRITE=True, GRID_SYNC=True)
    key = ("gluon", width, group, warps)
    if key not in gen._APPYC_RESIDENT:
        compiled = kernel.warmup(*args, 0, groups, sync, float(dt), out, grid=(1,), **consts,
                                 num_warps=warps, launch_cooperative_grid=True)
        compiled._init_handles()
        props = torch.cuda.get_device_properties(dev)
        gen._APPYC_RESIDENT[key] = gen._appyc_programs_per_sm(compiled, warps, props) * props.multi_processor_count
    grid = min(chunks, gen._APPYC_RESIDENT[key])
    kernel[(grid,)](*args, 0, groups, sync, float(dt), out, **consts, num_warps=warps,
                    launch_cooperative_grid=True)
    return float(out.item()), grid


def timed(fn, reps=5):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2] * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gen")
    ap.add_argument("gluon")
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--json")
    a = ap.parse_args()
    gen = load(a.gen, "wave_gen")
    glu = load(a.gluon, "wave_gluon_mod")
    torch.manual_seed(0)
    u0 = torch.randn(a.n, dtype=torch.float64, device="cuda")
    v0 = torch.randn(a.n, dtype=torch.float64, device="cuda") * 0.1
    dt0, decay = 0.4, 0.999
    records = []
    u, v = u0.clone(), v0.clone()
    dt_ref = gen.wave_decay(a.steps, u, v, dt0, decay)
    ref = (u.clone(), v.clone())
    t = timed(lambda: gen.wave_decay(a.steps, u0.clone(), v0.clone(), dt0, decay))
    print(f"generated (global scratch): {t:.3f} ms", flush=True)
    records.append({"variant": "generated", "ms": t})
    for width in (1024, 2048, 4096, 8192):
        for warps in (4, 8, 16):
            if width // (32 * warps) < 1:
                continue
            for group in (8, 16, 32, 64):
                if 4 * 2 * group > width:
                    continue
                try:
                    u, v = u0.clone(), v0.clone()
                    dt_out, grid = run_gluon(gen, glu.wave_gluon, a.steps, v, u, dt0, decay, width, group, warps)
                    err = max((u - ref[0]).abs().max().item(), (v - ref[1]).abs().max().item(),
                              abs(dt_out - dt_ref))
                    t = timed(lambda: run_gluon(gen, glu.wave_gluon, a.steps, v0.clone(), u0.clone(),
                                                dt0, decay, width, group, warps))
                except Exception as exc:  # noqa: BLE001 - the failure is the finding
                    print(f"gluon W={width} warps={warps} G={group}: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
                    continue
                print(f"gluon W={width} warps={warps} G={group} grid={grid}: {t:.3f} ms, max diff {err:.3g}", flush=True)
                records.append({"variant": "gluon", "W": width, "warps": warps, "G": group, "grid": grid,
                                "ms": t, "err": err})
    if a.json:
        with open(a.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
