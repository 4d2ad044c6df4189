"""Bounded NVSHMEM waits on GPUs (issue 24, part 1): deadlocks become errors, and what it costs.

Under torchrun with 2 processes (one per GPU), on modules generated beforehand (the GPU machine
has no Rust):

    target/release/appyc tests/difftest/nvshmem_deadlock.py -o gen_nvshmem/nvshmem_deadlock.py
    PYTHONUNBUFFERED=1 torchrun --standalone --nproc-per-node 2 bench/gpu_nvshmem_waits.py \\
        --modules gen_nvshmem --out $OUT

Parts (--parts, default all), each capped (--cap seconds) and logged by rank 0 to stdout and to
$OUT/waits.log, the numbers to $OUT/waits.json:

* `deadlock`: nvshmem_deadlock.py's `overwait` (every PE waits for one signal more than its
  peer sends) with APPYC_NVSHMEM_TIMEOUT=--timeout: every rank must raise _AppycNvshmemTimeout
  naming its PE, the flag element, the expected and observed values, t and the source line,
  within the bound (--timeout plus --slack seconds from its launch, after the compile).
* `peer_fails`: golden/nvshmem_jacobi2d_l8.py where rank 1 raises right before its launch (after
  the collective allocations): rank 0's first wait must give up within the bound and say so.
* `cost`: Listing 8 (golden/) at --sizes per GPU, per iteration, with the bounded waits (the
  module as generated) and with the bounds compiled out (the same module loaded again with
  `_APPYC_NVSHMEM_BOUNDED` false: NVSHMEM's own wait and the plain grid barrier), and, given
  --before, the module as generated before bounded waits (`git show 72f8f54^:golden/
  nvshmem_jacobi2d_l8.py`: no `live` register either), measured in turns, best of --reps; the
  bounds' cost in percent (target: under 1 % at 8192^2).
"""
import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

# NVLink multicast must stay off on these machines (NOTES.md); set before torch initialises.
os.environ["NVSHMEM_DISABLE_NVLS"] = "1"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ.setdefault("NVSHMEM_SYMMETRIC_SIZE", "24G")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "difftest"))


def load(path, name, bounded=True):
    import triton.language as tl

    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # Read when a kernel is first compiled: set before any launch of this copy of the module.
    mod._APPYC_NVSHMEM_BOUNDED = tl.constexpr(bounded)
    return mod


def main(args):
    import numpy as np
    import torch
    import torch.distributed as dist

    from nvshmem_cases import CASES

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    logfile = open(out / "waits.log", "a") if rank == 0 else None
    started = time.monotonic()
    result = {"device": f"{torch.cuda.get_device_name(device)} x {world}", "timeout": args.timeout}

    def log(*a):
        if rank == 0:
            line = " ".join(str(x) for x in (f"[{time.monotonic() - started:6.1f}s]", *a))
            print(line, flush=True)
            logfile.write(line + "\n")
            logfile.flush()

    def symmetric(mod, a):
        return mod._appyc_nvshmem_symmetric(torch.from_numpy(np.ascontiguousarray(a)).to(device))

    def gathered(record):
        everyone = [None] * world
        dist.all_gather_object(everyone, record)
        return everyone

    def call(mod, fn):
        """fn() on this rank: what it raised, and how long it took from the launch of `mod`'s
        kernel (its first compile, seconds of linking, comes before and does not count)."""
        launched = []

        class Stamped:
            def __init__(self, kernel):
                self.kernel = kernel

            def warmup(self, *a, **k):  # the compile, before the launch
                return self.kernel.warmup(*a, **k)

            def __getitem__(self, grid):  # the launch
                launched.append(time.monotonic())
                return self.kernel[grid]

        persistent = mod._appyc_nvshmem_persistent
        mod._appyc_nvshmem_persistent = lambda kernel, *a, **k: persistent(Stamped(kernel), *a, **k)
        raised = None
        try:
            fn()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - recorded
            raised = f"{type(e).__name__}: {e}"
        mod._appyc_nvshmem_persistent = persistent
        return {"raised": raised, "seconds": round(time.monotonic() - launched[0], 3) if launched else None}

    log("device", result["device"], "timeout", args.timeout, "s")
    os.environ["APPYC_NVSHMEM_TIMEOUT"] = str(args.timeout)
    bound = args.timeout + args.slack
    parts = args.parts.split(",")
    l8_case = CASES["jacobi2d_l8"]

    if "deadlock" in parts:
        mod = load(Path(args.modules) / "nvshmem_deadlock.py", "gen_deadlock")
        line = next(i for i, l in enumerate((ROOT / "tests/difftest/nvshmem_deadlock.py").read_text().splitlines(), 1)
                    if "SignalWait(flags[0], t + 1)" in l)
        tensors = [symmetric(mod, a) if isinstance(a, np.ndarray) else a for a in l8_case.make_args(rank, world)]
        got = gathered(call(mod, lambda: mod.overwait(*tensors)))
        checks = []
        for pe, r in enumerate(got):
            want = [f"PE {pe}: tests/difftest/nvshmem_deadlock.py:{line}: nvshmem.SignalWait(flags[0], t + 1)",
                    "at t = 1;", "flag element 0 is 1, the wait needs >= 2"]
            ok = (r["raised"] or "").startswith("_AppycNvshmemTimeout") and all(w in r["raised"] for w in want)
            checks.append(ok and r["seconds"] is not None and r["seconds"] <= bound)
            log(f"deadlock: rank {pe}, {r['seconds']} s after its launch (bound {bound:g} s):", r["raised"])
        result["deadlock"] = {"ranks": got, "ok": all(checks)}
        log("deadlock: every rank raised its record within the bound:", all(checks))

    if "peer_fails" in parts:
        mod = load(Path(args.golden) / "nvshmem_jacobi2d_l8.py", "gen_l8_peer")
        tensors = [symmetric(mod, a) if isinstance(a, np.ndarray) else a for a in l8_case.make_args(rank, world)]
        if rank == 1:
            def fail_before_launch(*a, **k):
                raise RuntimeError("rank 1 failed before its launch (on purpose)")
            mod._launch_jacobi_2d_persistent0 = fail_before_launch
        got = gathered(call(mod, lambda: mod.jacobi_2d(*tensors)))
        r0 = got[0]
        ok = ((r0["raised"] or "").startswith("_AppycNvshmemTimeout") and "PE 0:" in r0["raised"]
              and "at t = 1;" in r0["raised"] and r0["seconds"] is not None and r0["seconds"] <= bound)
        for pe, r in enumerate(got):
            log(f"peer_fails: rank {pe}, {r['seconds']} s after its launch (None: no launch):", r["raised"])
        result["peer_fails"] = {"ranks": got, "ok": ok}
        log("peer_fails: rank 0 raised within the bound:", ok)

    if "cost" in parts:
        os.environ["APPYC_NVSHMEM_TIMEOUT"] = "60"  # the default; the waits here never give up
        mods = {"bounded": load(Path(args.golden) / "nvshmem_jacobi2d_l8.py", "gen_l8_bounded"),
                "compiled_out": load(Path(args.golden) / "nvshmem_jacobi2d_l8.py", "gen_l8_unbounded", False)}
        if args.before:
            mods["before"] = load(Path(args.before), "gen_l8_before")
        result["cost"] = {}
        t1, t2 = args.iterations
        for n in [int(x) for x in args.sizes.split(",")]:
            s = time.monotonic()
            runs = {}
            for key, mod in mods.items():
                A = symmetric(mod, np.random.default_rng(rank).standard_normal((n + 2, n)))
                B = symmetric(mod, np.random.default_rng(rank + 7).standard_normal((n + 2, n)))
                runs[key] = (lambda t, mod=mod, A=A, B=B: mod.jacobi_2d(A, B, n + 2, n, t))
                runs[key](t1)  # compiles and loads the kernel
            times = {key: [] for key in runs}
            for _ in range(args.reps):  # in turns, so drift hits both alike
                for key, run in runs.items():
                    per = {}
                    for t in (t1, t2):
                        dist.barrier()
                        torch.cuda.synchronize()
                        s0 = time.perf_counter()
                        run(t)
                        torch.cuda.synchronize()
                        per[t] = time.perf_counter() - s0
                    times[key].append(1e6 * (per[t2] - per[t1]) / (t2 - t1))
                if time.monotonic() - s > args.cap:
                    log(f"cost: n = {n} reached the cap of {args.cap:g} s")
                    break
            best = {key: min(v) for key, v in times.items()}
            row = {"us_per_iteration": best, "all": times,
                   "overhead_percent": 100 * (best["bounded"] / best["compiled_out"] - 1)}
            result["cost"][str(n)] = row
            if "before" in best:
                row["overhead_vs_before_percent"] = 100 * (best["bounded"] / best["before"] - 1)
            log(f"cost: n = {n}: us per iteration {', '.join(f'{k} {v:.1f}' for k, v in best.items())}: "
                f"bounded vs compiled out {row['overhead_percent']:+.2f} %"
                + (f", vs before {row['overhead_vs_before_percent']:+.2f} %" if "before" in best else "")
                + f" (all: {times})")
            del A, B
            torch.cuda.empty_cache()

    dist.barrier()
    if rank == 0:
        (out / "waits.json").write_text(json.dumps(result, indent=1))
        log("wrote", out / "waits.json")
    dist.destroy_process_group()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="directory for waits.log and waits.json")
    ap.add_argument("--modules", default=str(ROOT / "gen_nvshmem"), help="holds nvshmem_deadlock.py, generated")
    ap.add_argument("--golden", default=str(ROOT / "golden"), help="holds nvshmem_jacobi2d_l8.py, generated")
    ap.add_argument("--before", default="", help="Listing 8's module as generated before bounded waits")
    ap.add_argument("--parts", default="deadlock,peer_fails,cost")
    ap.add_argument("--timeout", type=float, default=5.0, help="APPYC_NVSHMEM_TIMEOUT of the deadlock parts")
    ap.add_argument("--slack", type=float, default=5.0, help="seconds past the timeout a rank may take to raise")
    ap.add_argument("--sizes", default="1024,8192", help="per-GPU n of the cost part")
    ap.add_argument("--iterations", type=int, nargs=2, default=(20, 220), help="t1 t2 of the cost part")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cap", type=float, default=120.0, help="seconds a size of the cost part may take")
    main(ap.parse_args())
