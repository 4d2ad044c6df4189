#!/usr/bin/env python3
"""Weak and strong scaling of appyc's multi-GPU programs on 1, 2, 4 (and 8) GPUs, with JAX
`shard_map` beside them (issue 26). Every timed result is checked against a single-array run of
the same global problem first.

Programs (generated modules, as `appyc samples/X.py` writes them; golden/ by default):

    l8      Jacobi-2D, row slabs, halos put by hand (samples/nvshmem_jacobi2d_l8.py, Listing 8)
    grid2d  Jacobi-2D on a 2-D process grid, four neighbours (nvshmem_jacobi2d_grid.py)
    dist2d  the single-GPU jacobi_2d with `#pragma distribute(A, B)` (distribute_jacobi2d.py)
    slab3d  Jacobi-3D, plane slabs, two neighbours (nvshmem_jacobi3d.py)
    grid3d  Jacobi-3D on a 3-D process grid, six neighbours (nvshmem_jacobi3d_grid.py)
    dist3d  the single-GPU heat_3d with `#pragma distribute(A, B)` (distribute_stencils.py)

Scenarios: weak scaling at a small and a large domain per GPU (2-D: 1024^2 and 8192^2; 3-D:
128^3 and 384^3 interior points per GPU) and strong scaling of a fixed global domain (2-D
16384^2, 3-D 512^3). A slab program splits the global grid along axis 0 into W slabs, a grid
program along the process grid the samples derive from W (tests/difftest/nvshmem_cases.py's
process_grid: 2 GPUs 2 x 1 (x 1), 4 GPUs 2 x 2 (x 1), 8 GPUs 4 x 2 or 2 x 2 x 2), a distribute
program gets the global arrays on every rank. Time per iteration is two sweeps in every program.

    # everything, on the GPU machine (one torchrun per GPU count, then JAX, then the report):
    python3 scripts/gpu_scaling.py --launch --gpus 1,2,4 --out $OUT
    # one GPU count by hand, then JAX, then the report (runs anywhere, no GPU):
    torchrun --standalone --nproc-per-node 4 scripts/gpu_scaling.py --out $OUT
    python3 scripts/gpu_scaling.py --jax --gpus 1,2,4 --out $OUT
    python3 scripts/gpu_scaling.py --report $OUT --md bench/nvshmem_scaling_h100x4.md \
        --png bench/nvshmem_scaling_h100x4.png
    # --quick: small sizes only (the harness's smoke); --only l8,dist2d and --scenarios
    # weak_small,strong pick rows.

Checks: every case first runs one iteration (three at the small weak size) from a global grid
drawn on the GPU with a fixed seed, and compares each rank's part (its slab or block; a
distribute program: the whole global result, on every rank) with a torch run of the global
stencil on one GPU: the same periodic and fixed boundaries as the sample (nvshmem_cases.py's
NumPy references, in torch), the distribute samples' own source run on torch tensors. Timing:
microseconds per iteration from the difference of runs of t1 and t2 iterations (best of
--reps), t2 chosen so that the difference lasts about 50 ms; the slowest rank's value.

Files under OUT: scaling_w{W}.json per GPU count, jax_scaling.json, scaling.log (--launch). The
report computes weak efficiency T(1) / T(W) and strong efficiency T(1) / (W T(W)) per program.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

# NVLink multicast must stay off on these machines; set before torch initialises.
os.environ["NVSHMEM_DISABLE_NVLS"] = "1"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NCCL_NVLS_ENABLE"] = "0"
# The symmetric heap holds the pool of the NVSHMEM samples' arrays (two of the largest per-GPU
# array) and the `#pragma distribute` blocks of every shape run (never freed): about 14 GB.
os.environ.setdefault("NVSHMEM_SYMMETRIC_SIZE", "32G")

ROOT = Path(__file__).resolve().parents[1]
for _p in (ROOT / "tests" / "difftest", ROOT / "python", ROOT / "samples"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))


class Program:
    def __init__(self, key, module, function, dims, layout, label, scenarios=None, check=True):
        self.key, self.module, self.function = key, module, function
        self.dims, self.layout, self.label = dims, layout, label
        # Extra rows (not in the default set) run only in these scenarios; `check` False: a
        # variant that computes something else (communication removed), timed only.
        self.scenarios, self.check = scenarios, check


PROGRAMS = {p.key: p for p in (
    Program("l8", "nvshmem_jacobi2d_l8", "jacobi_2d", 2, "slab", "Jacobi-2D row slabs (Listing 8)"),
    Program("grid2d", "nvshmem_jacobi2d_grid", "jacobi_2d", 2, "grid", "Jacobi-2D 2-D process grid"),
    Program("dist2d", "distribute_jacobi2d", "jacobi_2d", 2, "dist", "Jacobi-2D #pragma distribute"),
    Program("slab3d", "nvshmem_jacobi3d", "jacobi_3d", 3, "slab", "Jacobi-3D plane slabs"),
    Program("grid3d", "nvshmem_jacobi3d_grid", "jacobi_3d", 3, "grid", "Jacobi-3D 3-D process grid"),
    Program("dist3d", "distribute_stencils", "heat_3d", 3, "dist", "Heat-3D #pragma distribute"),
)}
DEFAULT = list(PROGRAMS)
# Probe rows (issue 26), given by --only: Listing 8 as generated before the neighbour PEs were
# left unspecialised (a module of --modules named so), and without its communication.
PROGRAMS.update({p.key: p for p in (
    Program("l8_spec", "nvshmem_jacobi2d_l8_spec", "jacobi_2d", 2, "slab",
            "Listing 8, kernel specialised per PE (before)", scenarios=("weak_large",)),
    Program("l8_nocomm", "nvshmem_jacobi2d_l8_nocomm", "jacobi_2d", 2, "slab",
            "Listing 8 without puts and waits (compute alone)", scenarios=("weak_large",), check=False),
)})

# scenario -> (kind, size per dims): weak sizes are interior points per GPU along each axis,
# strong sizes the global extent along each axis.
SCENARIOS = {
    "weak_small": ("weak", {2: 1024, 3: 128}),
    "weak_large": ("weak", {2: 8192, 3: 384}),
    "strong": ("strong", {2: 16384, 3: 512}),
}
QUICK = {
    "weak_small": ("weak", {2: 128, 3: 32}),
    "weak_large": ("weak", {2: 512, 3: 64}),
    "strong": ("strong", {2: 1024, 3: 128}),
}


def process_grid(world, dims):
    from nvshmem_cases import process_grid as grid

    return grid(world, dims)


def global_shape(prog, scenario, world, table=SCENARIOS):
    """The global grid of `prog` in `scenario` on `world` GPUs."""
    kind, sizes = table[scenario]
    n = sizes[prog.dims]
    if kind == "strong":
        return (n,) * prog.dims
    if prog.layout == "grid":
        return tuple(p * n for p in process_grid(world, prog.dims))
    return (n * world,) + (n,) * (prog.dims - 1)


def partition(prog, shape, world, rank):
    """(starts, sizes) of this rank's part of the global grid: a slab of axis 0, or a block of
    the process grid (row-major PE numbering, as the samples use)."""
    if prog.layout == "grid":
        grid = process_grid(world, prog.dims)
        at, rest = [], rank
        for g in reversed(grid):
            at.append(rest % g)
            rest //= g
        at.reverse()
        sizes = [s // g for s, g in zip(shape, grid)]
        return [a * b for a, b in zip(at, sizes)], sizes
    rows = shape[0] // world
    return [rank * rows] + [0] * (len(shape) - 1), [rows] + list(shape[1:])


def cut(G, starts, sizes, halo_axes):
    """G's block at `starts` of `sizes`, with one wrapped halo layer along `halo_axes`."""
    import torch

    X = G
    for ax, (s, b) in enumerate(zip(starts, sizes)):
        lo, hi = (s - 1, s + b + 1) if ax in halo_axes else (s, s + b)
        idx = torch.arange(lo, hi, device=G.device) % G.shape[ax]
        X = X.index_select(ax, idx)
    return X.contiguous()


def reference(prog, G, T):
    """The global result of T iterations (2T sweeps) on one GPU, in torch: for the NVSHMEM
    samples nvshmem_cases.py's NumPy references (periodic along split axes, fixed faces
    elsewhere), for the distribute samples their own source on torch tensors. Returns the
    arrays the program's first argument(s) hold afterwards."""
    import torch

    if prog.layout == "dist":
        source = importlib.import_module(prog.module)
        A, B = G.clone(), G.clone()
        getattr(source, prog.function)(A, B, *G.shape, T)
        return A, B
    A = G.clone()
    for _ in range(2 * T):
        if prog.layout == "grid":  # periodic in every axis
            s = A.clone()
            for ax in range(A.ndim):
                s += torch.roll(A, 1, ax) + torch.roll(A, -1, ax)
            A = 0.2 * s if A.ndim == 2 else s / 7.0
        elif A.ndim == 2:  # rows periodic, first and last columns fixed
            B = A.clone()
            B[:, 1:-1] = 0.2 * (A[:, 1:-1] + A[:, :-2] + A[:, 2:] + torch.roll(A, 1, 0)[:, 1:-1]
                                + torch.roll(A, -1, 0)[:, 1:-1])
            A = B
        else:  # planes periodic, the faces of axes 1 and 2 fixed
            B = A.clone()
            B[:, 1:-1, 1:-1] = (A[:, 1:-1, 1:-1] + torch.roll(A, 1, 0)[:, 1:-1, 1:-1]
                                + torch.roll(A, -1, 0)[:, 1:-1, 1:-1] + A[:, :-2, 1:-1] + A[:, 2:, 1:-1]
                                + A[:, 1:-1, :-2] + A[:, 1:-1, 2:]) / 7.0
            A = B
    return (A,)


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def microseconds_per_iteration(run, t1, reps, target_s=0.05, t2=None, samples=None):
    """Per-rank microseconds per iteration from runs of t1 and t2 iterations (best of `reps`
    each, every rank starting together), after a warm-up run; t2 makes the difference last
    about `target_s` unless given. Set-up and first-call costs cancel. `samples`: a dict that
    receives every timed call's milliseconds by iteration count."""
    import torch
    import torch.distributed as dist

    def timed(t):
        dist.barrier()
        torch.cuda.synchronize()
        s = time.perf_counter()
        run(t)
        torch.cuda.synchronize()
        return time.perf_counter() - s

    run(t1)
    if t2 is None:
        a, b = timed(t1), timed(t1 + 40)
        # A noisy difference must not ask for thousands of slow iterations: at least a quarter
        # of the mean time of a call.
        rough = max((b - a) / 40, b / (t1 + 40) / 4)
        t2 = t1 + int(min(4000, max(20, target_s / max(rough, 1e-7))))
        # Every rank must run the same count: the slowest rank's choice.
        box = torch.tensor([t2], device="cuda")
        dist.all_reduce(box, op=dist.ReduceOp.MIN)
        t2 = int(box.item())
    calls = {t: [timed(t) for _ in range(reps)] for t in (t1, t2)}
    best = {t: min(v) for t, v in calls.items()}
    if samples is not None:  # every timed call (ms), to see the per-call cost and its spread
        samples.update({str(t): [round(1e3 * x, 4) for x in v] for t, v in calls.items()})
    return 1e6 * (best[t2] - best[t1]) / (t2 - t1), t2


class Pool:
    """Two symmetric buffers of the largest per-GPU array, carved into each case's A and B:
    symmetric memory is never freed (the module's rule), so per-case allocations would pile
    up; a view at the same offset on every rank is as symmetric as its buffer. Registered in
    every loaded module's heap list, which the launchers check."""

    def __init__(self, mods, numel, device):
        import torch

        first = next(iter(mods.values()))
        self.buffers = [first._appyc_nvshmem_symmetric(torch.zeros(numel, dtype=torch.float64, device=device))
                        for _ in range(2)]
        record = first._APPYC_NVSHMEM_STATE["heap"][-2:]
        for m in mods.values():
            if m is not first:
                m._APPYC_NVSHMEM_STATE["heap"].extend(record)

    def arrays(self, block):
        n = block.numel()
        if n > self.buffers[0].numel():
            raise MemoryError(f"the pool holds {self.buffers[0].numel()} elements, a case needs {n}")
        A = self.buffers[0][:n].view(block.shape)
        B = self.buffers[1][:n].view(block.shape)
        A.copy_(block)
        B.copy_(block)
        return A, B


def largest_block(programs, scenarios, world, table):
    """Elements of the largest per-GPU array (halos included) among the NVSHMEM samples' cases."""
    import math

    most = 1
    for prog in programs:
        if prog.layout == "dist":
            continue
        for sc in scenarios:
            shape = global_shape(prog, sc, world, table)
            _, sizes = partition(prog, shape, world, 0)
            halo = range(prog.dims) if prog.layout == "grid" else (0,)
            most = max(most, math.prod(b + 2 if ax in halo else b for ax, b in enumerate(sizes)))
    return most


def cap_programs(mod, most):
    """--programs: every persistent launch of the loaded module `mod` with at most `most`
    programs (the launcher's `work` caps the grid; the grid-stride loops cover any count), so
    that two kernels can be timed at the same count whatever their registers let an SM hold."""
    launch = mod._appyc_nvshmem_persistent

    def capped(kernel, phases, work, *rest, **options):
        return launch(kernel, phases, most if work is None else min(work, most), *rest, **options)

    mod._appyc_nvshmem_persistent = capped


def gpu_main(args):
    import torch
    import torch.distributed as dist
    import triton

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local)
    torch.cuda.set_device(device)
    # Called from the probe (bench/gpu_scaling_probe.py) the group exists already.
    owner = not dist.is_initialized()
    if owner:
        dist.init_process_group("nccl", device_id=device)
    table = QUICK if args.quick else SCENARIOS
    programs = [PROGRAMS[k] for k in (args.only.split(",") if args.only else DEFAULT)]
    scenarios = args.scenarios.split(",") if args.scenarios else list(table)
    started = time.monotonic()

    def log(*a):
        if rank == 0:
            print(f"[w{world} {time.monotonic() - started:6.1f}s]", *a, flush=True)

    mods = {}
    for prog in programs:
        if prog.module not in mods:
            mods[prog.module] = load(Path(args.modules) / f"{prog.module}.py", f"gen_{prog.module}")
    if getattr(args, "programs", 0):  # bench/gpu_scaling_probe.py's namespace has none
        for m in mods.values():
            cap_programs(m, args.programs)
    pool = Pool({k: m for k, m in mods.items()}, largest_block(programs, scenarios, world, table), device)
    result = {"world": world, "device": torch.cuda.get_device_name(device), "torch": torch.__version__,
              "triton": triton.__version__, "quick": bool(args.quick), "cases": {}}
    log("device", result["device"], "programs", [p.key for p in programs], "scenarios", scenarios)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for prog in programs:
        mod = mods[prog.module]
        fn = getattr(mod, prog.function)
        for sc in scenarios:
            name = f"{prog.key}/{sc}"
            if prog.scenarios and sc not in prog.scenarios:
                continue
            if time.monotonic() - started > args.budget:
                log(name, "skipped: over the budget of", args.budget, "s")
                if rank == 0:
                    result["cases"][name] = {"skipped": "budget"}
                continue
            s0 = time.monotonic()
            row = {"program": prog.key, "scenario": sc, "global": list(global_shape(prog, sc, world, table))}
            try:
                row.update(run_case(prog, sc, fn, pool, table, world, rank, device, args))
            except Exception as e:  # noqa: BLE001 - recorded, the other cases go on
                row["error"] = f"{type(e).__name__}: {e}"[:500]
                torch.cuda.synchronize()
            dist.barrier()
            torch.cuda.empty_cache()
            row["wall_s"] = round(time.monotonic() - s0, 2)
            if rank == 0:
                result["cases"][name] = row
            log(name, {k: v for k, v in row.items() if k != "global"})
            if rank == 0:  # written after every case, so a run cut short keeps what it did
                (out / f"scaling_w{world}.json").write_text(json.dumps(result, indent=1))
    # (registers, spills, programs) of every kernel each rank compiled or loaded.
    kernels = {name: sorted({(c.n_regs, c.n_spills, p) for c, p in m._APPYC_NVSHMEM_STATE["programs"].values()})
               for name, m in mods.items()}
    every = [None] * world
    dist.all_gather_object(every, kernels)
    if rank == 0:
        result["kernels"] = every
        (out / f"scaling_w{world}.json").write_text(json.dumps(result, indent=1))
    log("wrote", out / f"scaling_w{world}.json")
    dist.barrier()
    if owner:
        dist.destroy_process_group()


def run_case(prog, sc, fn, pool, table, world, rank, device, args):
    """Check, then time, one program in one scenario on this rank; returns the row's fields."""
    import torch
    import torch.distributed as dist

    shape = global_shape(prog, sc, world, table)
    starts, sizes = partition(prog, shape, world, rank)
    gen = torch.Generator(device=device)
    gen.manual_seed(1000 + len(shape) * 7 + shape[0])
    G = torch.randn(shape, generator=gen, device=device, dtype=torch.float64)
    T = 3 if sc == "weak_small" else 1

    def arrays():
        if prog.layout == "dist":
            return G.clone(), G.clone()
        halo = range(prog.dims) if prog.layout == "grid" else (0,)
        return pool.arrays(cut(G, starts, sizes, halo))

    # -- check against the single-array run --------------------------------------------------
    A, B = arrays()
    fn(A, B, *A.shape, T)
    torch.cuda.synchronize()
    want = reference(prog, G, T) if prog.check else None
    if not prog.check:
        err = 0.0
    elif prog.layout == "dist":
        err = max(float((A - want[0]).abs().max()), float((B - want[1]).abs().max()))
    else:
        inner = tuple(slice(1, -1) if (prog.layout == "grid" or ax == 0) else slice(None)
                      for ax in range(prog.dims))
        mine = tuple(slice(s, s + b) for s, b in zip(starts, sizes))
        err = float((A[inner] - want[0][mine]).abs().max())
    del want
    worst = torch.tensor([err], device=device)
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    row = {"check_iterations": T if prog.check else 0, "error": float(worst.item()),
           "ok": bool(worst.item() < 1e-9)}
    if prog.layout == "dist":
        del G
    # -- time --------------------------------------------------------------------------------
    calls = {}
    us, t2 = microseconds_per_iteration(lambda t: fn(A, B, *A.shape, t), args.t1, args.reps, samples=calls)
    per_rank = [None] * world
    dist.all_gather_object(per_rank, us)
    row.update({"us": max(per_rank), "us_ranks": per_rank, "t1": args.t1, "t2": t2,
                "block": [b for b in A.shape], "calls_ms": calls})
    if getattr(args, "programs", 0):
        row["programs_cap"] = args.programs
    return row


# ------------------------------------------------------------------------------------------
# compiles ahead (no torchrun): each program in a process of its own, every GPU count and rank


class CompileHost:
    """PE `pe` of `n` for compiling without peers: symmetric arrays are the arrays themselves
    (on the CPU: Triton specialises on dtype and alignment alone, and nothing runs on a GPU, so
    JAX can time meanwhile), collectives are local, and a persistent launch only compiles
    (Triton's warmup with the runtime's launch options): its specialisation lands in Triton's
    cache, where the torchrun ranks find it."""

    def __init__(self, mod, pe, n, device):
        import torch

        self.mod, self.pe, self.n, self.device, self.torch = mod, pe, n, device, torch

    def my_pe(self):
        return self.pe

    def n_pes(self):
        return self.n

    def symmetric(self, t):
        return t.to(self.device)

    def check_symmetric(self, *arrays):
        pass

    def distributed(self):
        return True

    def gather(self, t):
        return self.torch.stack([t] * self.n)

    def host_barrier(self):
        pass

    def persistent(self, kernel, phases, work, args, mvl, num_warps, constants=None, sites=None):
        # The options of templates/nvshmem.py.jinja's _appyc_nvshmem_persistent, exactly.
        control = self.torch.zeros(16, dtype=self.torch.int64, device=self.device)
        kernel.warmup(*args, 0, phases, control, grid=(1,), MVL=mvl, GRID_SYNC=True, num_warps=num_warps,
                      launch_cooperative_grid=True, maxnreg=self.mod._APPYC_NVSHMEM_MAXNREG,
                      extern_libs=self.mod._appyc_nvshmem_lib(), **(constants or {}))


def compile_job(args):
    import torch

    prog = PROGRAMS[args.compile_job]
    table = QUICK if args.quick else SCENARIOS
    scenarios = [sc for sc in (args.scenarios.split(",") if args.scenarios else table)
                 if not prog.scenarios or sc in prog.scenarios]
    device = torch.device("cpu")
    mod = load(Path(args.modules) / f"{prog.module}.py", f"gen_{prog.module}")
    fn = getattr(mod, prog.function)
    s0 = time.monotonic()
    gpus = [int(g) for g in args.gpus.split(",")]
    if prog.layout == "dist":
        # Its kernel's arguments specialise alike on every PE, GPU count and size up to the
        # row block (a dry run with the launch replaced found one class each), and each call
        # copies the global arrays: one PE of one GPU, the two weak sizes.
        gpus, scenarios = [1], [sc for sc in scenarios if table[sc][0] == "weak"] or scenarios

    def every_case(device):
        for w in gpus:
            for rank in range(w):
                mod._appyc_nvshmem_use(CompileHost(mod, rank, w, device))
                for sc in scenarios:
                    shape = global_shape(prog, sc, w, table)
                    if prog.layout == "dist":
                        A = torch.empty(shape, dtype=torch.float64, device=device)
                    else:
                        _, sizes = partition(prog, shape, w, rank)
                        halo = range(prog.dims) if prog.layout == "grid" else (0,)
                        A = torch.empty([b + 2 if ax in halo else b for ax, b in enumerate(sizes)],
                                        dtype=torch.float64, device=device)
                    fn(A, torch.empty_like(A), *A.shape, 1)
                    del A

    try:
        every_case(device)
    except Exception as e:  # noqa: BLE001 - a Triton that wants device tensors: on a GPU then
        print(f"[compile {prog.key}] on the CPU: {type(e).__name__}: {str(e)[:200]}; again with GPU tensors", flush=True)
        every_case(torch.device("cuda", torch.cuda.current_device()))
    print(f"[compile {prog.key}] {time.monotonic() - s0:.1f} s", flush=True)


def compile_ahead(args, gpus, limit, logf):
    """Every selected program's compile job at once; waits up to `limit` s."""
    keys = args.only.split(",") if args.only else DEFAULT
    procs = []
    for key in keys:
        cmd = [sys.executable, __file__, "--compile-job", key, "--gpus", ",".join(map(str, gpus)),
               "--modules", args.modules] + (["--quick"] if args.quick else []) \
            + (["--scenarios", args.scenarios] if args.scenarios else [])
        procs.append(subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True))
    deadline = time.monotonic() + limit
    for p in procs:
        try:
            p.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            p.wait()


# ------------------------------------------------------------------------------------------
# the JAX peer (one process, every GPU; not under torchrun)

def jax_main(args):
    """JAX shard_map + ppermute in a jitted fori_loop: Listing 8's row split (periodic rows,
    fixed first and last columns), the weak and strong 2-D scenarios on each GPU count."""
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    from nvshmem_cases import Jacobi2D

    jax.config.update("jax_enable_x64", True)
    devices = jax.devices()
    table = QUICK if args.quick else SCENARIOS
    gpus = [w for w in (int(g) for g in args.gpus.split(",")) if w <= len(devices)]
    scenarios = args.scenarios.split(",") if args.scenarios else list(table)
    result = {"jax": jax.__version__, "device": f"{devices[0].device_kind} x {len(devices)}",
              "quick": bool(args.quick), "cases": {}, "correct": {}}
    started = time.monotonic()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def log(*a):
        print(f"[jax {time.monotonic() - started:6.1f}s]", *a, flush=True)

    def program(w):
        mesh = Mesh(np.array(devices[:w]), ("x",))
        to_next = [(i, (i + 1) % w) for i in range(w)]
        to_prev = [(i, (i - 1) % w) for i in range(w)]

        def sweep(a):
            above = jax.lax.ppermute(a[-1:], "x", perm=to_next)
            below = jax.lax.ppermute(a[:1], "x", perm=to_prev)
            x = jnp.concatenate([above, a, below])
            inner = 0.2 * (x[1:-1, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] + x[2:, 1:-1] + x[:-2, 1:-1])
            return a.at[:, 1:-1].set(inner)

        def block(a, t):
            return jax.lax.fori_loop(0, t, lambda _, b: sweep(sweep(b)), a)

        split = P("x", None)
        run = jax.jit(jax.shard_map(block, mesh=mesh, in_specs=(split, P()), out_specs=split))
        return run, NamedSharding(mesh, split)

    prog = PROGRAMS["l8"]
    for w in gpus:
        run, sharding = program(w)
        case = Jacobi2D("x", rows=64, cols=257, T=3)
        got = np.asarray(run(jax.device_put(case.global_grid(w), sharding), case.T))
        err = float(np.abs(got - case.expected(w)).max())
        result["correct"][str(w)] = {"error": err, "ok": bool(err < 1e-9)}
        log("correct", w, "GPU(s)", result["correct"][str(w)])
        for sc in scenarios:
            shape = global_shape(prog, sc, w, table)
            s0 = time.monotonic()
            try:
                A = jax.device_put(np.random.default_rng(0).standard_normal(shape), sharding)
                run(A, args.t1).block_until_ready()  # compiles (t is traced: one compile for every t)

                def timed(t):
                    s = time.perf_counter()
                    run(A, t).block_until_ready()
                    return time.perf_counter() - s

                a, b = timed(args.t1), timed(args.t1 + 40)
                rough = max((b - a) / 40, b / (args.t1 + 40) / 4)
                t2 = args.t1 + int(min(4000, max(20, 0.05 / max(rough, 1e-7))))
                best = {t: min(timed(t) for _ in range(args.reps)) for t in (args.t1, t2)}
                us = 1e6 * (best[t2] - best[args.t1]) / (t2 - args.t1)
                row = {"program": "jax", "scenario": sc, "global": list(shape), "us": us, "t2": t2}
                del A
            except Exception as e:  # noqa: BLE001 - recorded
                row = {"program": "jax", "scenario": sc, "global": list(shape), "error": f"{type(e).__name__}: {e}"[:300]}
            row["wall_s"] = round(time.monotonic() - s0, 2)
            result["cases"][f"{w}/{sc}"] = row
            log(w, "GPU(s)", sc, row)
            (out / "jax_scaling.json").write_text(json.dumps(result, indent=1))
    (out / "jax_scaling.json").write_text(json.dumps(result, indent=1))


# ------------------------------------------------------------------------------------------
# the launcher (on the GPU machine: every GPU count, then JAX, within a time budget)

def launch(args):
    """Compiles ahead (every program, GPU count and rank; JAX's run meanwhile: it only uses the
    GPUs while the compiles only use the CPUs), then one torchrun per GPU count, largest budget
    share first to the 1-GPU run (the baseline of every efficiency)."""
    import torch

    have = torch.cuda.device_count()
    gpus = [w for w in (int(g) for g in args.gpus.split(",")) if w <= have]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    logf = open(out / "scaling.log", "a")
    started = time.monotonic()
    deadline = started + args.budget

    def note(text):
        line = f"[launch {time.monotonic() - started:6.1f}s] {text}"
        print(line, flush=True)
        logf.write(line + "\n")
        logf.flush()

    common = ["--out", str(out), "--modules", args.modules, "--t1", str(args.t1), "--reps", str(args.reps)]
    if args.quick:
        common.append("--quick")
    if args.scenarios:
        common += ["--scenarios", args.scenarios]
    env = dict(os.environ, PYTHONUNBUFFERED="1", XLA_PYTHON_CLIENT_PREALLOCATE="false")
    jax = None
    if not args.no_jax:
        jax = subprocess.Popen([sys.executable, __file__, "--jax", "--gpus", ",".join(map(str, gpus))] + common,
                               stdout=logf, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        note("jax started")
    if not args.no_compile:
        compile_ahead(args, gpus, args.compile_limit, logf)
        note("compiled ahead")
    if jax is not None:
        try:
            jax.wait(timeout=max(1.0, args.jax_limit - (time.monotonic() - started)))
        except subprocess.TimeoutExpired:
            os.killpg(jax.pid, 9)
            jax.wait()
        note(f"jax exit {jax.returncode}")
    only = ["--only", args.only] if args.only else []
    order = sorted(gpus, key=lambda w: (w != 1, -w))  # 1, then the largest first
    for i, w in enumerate(order):
        left = deadline - time.monotonic()
        if left < 20:
            note(f"w{w}: skipped, {left:.0f} s left")
            continue
        limit = left / (len(order) - i)
        cmd = ["torchrun", "--standalone", "--nproc-per-node", str(w), __file__] + common + only \
            + ["--budget", str(max(5.0, limit - 15))]
        note(f"w{w}: limit {limit:.0f} s")
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        timer = __import__("threading").Timer(limit, lambda p=p: os.killpg(p.pid, 9))
        timer.start()
        for line in iter(p.stdout.readline, b""):
            text = line.decode(errors="replace")
            if text.startswith("W11") or "OMP_NUM_THREADS" in text or text.startswith("****"):
                continue
            sys.stdout.write(text)
            sys.stdout.flush()
            logf.write(text)
        p.wait()
        timer.cancel()
        note(f"w{w}: exit {p.returncode}")
    logf.close()


# ------------------------------------------------------------------------------------------
# the report (no GPU)

def efficiency_rows(runs, jax):
    """{(program, scenario): {W: us}} from the GPU counts' JSON files and the JAX one."""
    times = {}
    for w, r in runs.items():
        for row in r["cases"].values():
            if isinstance(row.get("us"), (int, float)) and row.get("ok"):
                times.setdefault((row["program"], row["scenario"]), {})[w] = row["us"]
    for key, row in (jax or {}).get("cases", {}).items():
        w = int(key.split("/")[0])
        if isinstance(row.get("us"), (int, float)) and (jax.get("correct", {}).get(str(w), {}).get("ok")):
            times.setdefault(("jax", row["scenario"]), {})[w] = row["us"]
    return times


def efficiency(scenario, t1, tw, w):
    kind = SCENARIOS.get(scenario, ("weak",))[0]
    return t1 / tw if kind == "weak" else t1 / (w * tw)


def report(args):
    src = Path(args.report)
    runs = {}
    for p in sorted(src.glob("scaling_w*.json")):
        r = json.loads(p.read_text())
        runs[r["world"]] = r
    jax = json.loads((src / "jax_scaling.json").read_text()) if (src / "jax_scaling.json").exists() else None
    times = efficiency_rows(runs, jax)
    gpus = sorted(runs)
    labels = {k: p.label for k, p in PROGRAMS.items()}
    labels["jax"] = "JAX shard_map (row split, as L8)"
    order = list(PROGRAMS) + ["jax"]
    quick = any(r.get("quick") for r in runs.values())
    table = QUICK if quick else SCENARIOS
    lines = ["# Multi-GPU scaling (scripts/gpu_scaling.py)", ""]
    for w, r in sorted(runs.items()):
        lines.append(f"- {w} GPU(s): {r['device']}, torch {r['torch']}, Triton {r['triton']}")
    if jax:
        lines.append(f"- JAX {jax['jax']} on {jax['device']}, one process for all GPUs")
    lines.append("")

    def domain(prog_key, sc):
        kind, sizes = table[sc]
        dims = PROGRAMS[prog_key].dims if prog_key in PROGRAMS else 2
        n = sizes[dims]
        return f"{n}^{dims} per GPU" if kind == "weak" else f"{n}^{dims} in all"

    for kind, title, formula in (("weak", "Weak scaling", "T(1) / T(W)"),
                                 ("strong", "Strong scaling", "T(1) / (W x T(W))")):
        lines += [f"## {title}: time per iteration (two sweeps, us) and efficiency {formula}", "",
                  "| program | domain | " + " | ".join(f"{w} GPU" for w in gpus) + " | "
                  + " | ".join(f"eff. {w}" for w in gpus if w > 1) + " |",
                  "|---|---|" + "---|" * (len(gpus) + len([w for w in gpus if w > 1]))]
        for sc in (s for s in table if table[s][0] == kind):
            for key in order:
                t = times.get((key, sc))
                if not t:
                    continue
                cells = [f"{t[w]:.1f}" if w in t else "-" for w in gpus]
                effs = [f"{100 * efficiency(sc, t[1], t[w], w):.1f} %" if (1 in t and w in t) else "-"
                        for w in gpus if w > 1]
                lines.append(f"| {labels[key]} | {domain(key, sc)} | " + " | ".join(cells) + " | "
                             + " | ".join(effs) + " |")
        lines.append("")
    # The paper's baseline: one GPU with its communication disabled.
    base = times.get(("l8_nocomm", "weak_large"), {}).get(1)
    if base and times.get(("l8", "weak_large")):
        cells = [f"{w} GPU(s) {100 * base / t:.1f} %" for w, t in sorted(times[("l8", "weak_large")].items())]
        lines += ["Listing 8 against one GPU without communication (the paper's baseline, 8192^2 per GPU): "
                  + ", ".join(cells), ""]
    # JAX against the row programs
    if jax:
        lines += ["## JAX shard_map / appyc (time ratio; above 1: appyc faster)", "",
                  "| scenario | GPUs | JAX us | L8 us | JAX / L8 | distribute us | JAX / distribute |",
                  "|---|---|---|---|---|---|---|"]
        for sc in (s for s in table if PROGRAMS["l8"].dims in table[s][1]):
            for w in gpus:
                j = times.get(("jax", sc), {}).get(w)
                a = times.get(("l8", sc), {}).get(w)
                d = times.get(("dist2d", sc), {}).get(w)
                if j is None:
                    continue
                lines.append(f"| {sc} ({domain('l8', sc)}) | {w} | {j:.1f} | "
                             + (f"{a:.1f} | {j / a:.2f}x" if a else "- | -") + " | "
                             + (f"{d:.1f} | {j / d:.2f}x" if d else "- | -") + " |")
        lines.append("")
    # checks
    lines += ["## Checks (each case's first run against a single-array torch run of the global problem)", "",
              "| case | GPUs | iterations | max abs error | ok | rank spread of the time |", "|---|---|---|---|---|---|"]
    bad = []
    for w, r in sorted(runs.items()):
        for name, row in r["cases"].items():
            if "error" in row and not isinstance(row.get("error"), float):
                lines.append(f"| {name} | {w} | - | {row['error'][:120]} | False | - |")
                bad.append(f"{name} on {w}")
                continue
            if "ok" not in row:
                lines.append(f"| {name} | {w} | - | {row.get('skipped', '-')} | - | - |")
                continue
            spread = "-"
            if row.get("us_ranks"):
                spread = f"{min(row['us_ranks']):.1f} .. {max(row['us_ranks']):.1f}"
            lines.append(f"| {name} | {w} | {row['check_iterations']} | {row['error']:.3g} | {row['ok']} | {spread} |")
            if not row["ok"]:
                bad.append(f"{name} on {w}")
    if jax:
        for w, c in sorted(jax.get("correct", {}).items()):
            lines.append(f"| jax (64 x 257 rows a GPU, 3 iterations, against NumPy) | {w} | 3 | {c['error']:.3g} | {c['ok']} | - |")
    lines.append("")
    if bad:
        lines += ["Failed or errored: " + ", ".join(bad), ""]
    text = "\n".join(lines) + "\n"
    md = Path(args.md) if args.md else src / "scaling.md"
    if args.md and md.exists() and args.keep_head:
        # Keep what is above the generated part (the probe's notes at the top of the file).
        head = md.read_text().split("# Multi-GPU scaling (scripts/gpu_scaling.py)")[0]
        text = head + text
    md.write_text(text)
    print(text)
    png = Path(args.png) if args.png else src / "scaling.png"
    plot(times, gpus, table, labels, order, png)


def plot(times, gpus, table, labels, order, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(no matplotlib: no PNG)")
        return
    scs = list(table)
    fig, axes = plt.subplots(1, len(scs), figsize=(5.2 * len(scs), 4.6), sharey=True)
    styles = {"l8": "-o", "grid2d": "-s", "dist2d": "-v", "slab3d": "--o", "grid3d": "--s", "dist3d": "--v",
              "jax": ":x", "l8_spec": ":o", "l8_nocomm": ":."}
    colors = {"l8": "C0", "grid2d": "C1", "dist2d": "C2", "slab3d": "C3", "grid3d": "C4", "dist3d": "C5",
              "jax": "C7", "l8_spec": "C9", "l8_nocomm": "C8"}
    floor = 80.0  # efficiencies below it are drawn on it, their value written beside
    handles = {}
    for ax, sc in zip(axes, scs):
        kind, sizes = table[sc]
        below = {}  # annotations on the floor so far, by GPU count: stacked, not overlaid
        for key in order:
            t = times.get((key, sc))
            if not t or 1 not in t:
                continue
            ws = [w for w in gpus if w in t]
            eff = [100 * efficiency(sc, t[1], t[w], w) for w in ws]
            line, = ax.plot(ws, [max(e, floor + 0.5) for e in eff], styles.get(key, "-"),
                            color=colors.get(key), label=labels[key])
            handles.setdefault(labels[key], line)
            for w, e in zip(ws, eff):
                if e < floor:
                    k = below[w] = below.get(w, -1) + 1
                    ax.annotate(f"{e:.0f} %", (w, floor + 0.5), textcoords="offset points", xytext=(4, 4 + 9 * k),
                                fontsize=7, color=colors.get(key))
        ax.axhline(98, color="grey", lw=0.8, ls="--")
        ax.text(gpus[-1], 98.3, "98 %", fontsize=7, color="grey", ha="right")
        what = "per GPU" if kind == "weak" else "in all"
        ax.set_title(f"{kind} scaling: 2-D {sizes[2]}^2, 3-D {sizes[3]}^3 {what}", fontsize=9)
        ax.set_xlabel("GPUs")
        ax.set_xticks(gpus)
        ax.set_ylim(floor, 105)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("efficiency (%), weak T1/TW, strong T1/(W TW)")
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=5, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(png, dpi=120)
    print("wrote", png)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT", "scaling_out"))
    ap.add_argument("--modules", default=str(ROOT / "golden"), help="directory of the generated modules")
    ap.add_argument("--quick", action="store_true", help="small sizes only (a smoke of the harness)")
    ap.add_argument("--only", default="", help="programs, e.g. l8,dist2d (default: " + ",".join(PROGRAMS) + ")")
    ap.add_argument("--scenarios", default="", help="e.g. weak_large,strong (default: all)")
    ap.add_argument("--t1", type=int, default=5, help="iterations of the shorter timed run")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--programs", type=int, default=0,
                    help="probe: at most this many programs in every persistent launch (0: as generated)")
    ap.add_argument("--budget", type=float, default=1e9, help="seconds: no case starts after this")
    ap.add_argument("--gpus", default="1,2,4,8", help="GPU counts for --launch and --jax (those present)")
    ap.add_argument("--launch", action="store_true", help="torchrun every GPU count, then --jax")
    ap.add_argument("--no-jax", action="store_true", help="with --launch: leave JAX out")
    ap.add_argument("--no-compile", action="store_true", help="with --launch: no compiles ahead")
    ap.add_argument("--compile-limit", type=float, default=60.0, help="with --launch: seconds for the compiles ahead")
    ap.add_argument("--jax-limit", type=float, default=70.0, help="with --launch: seconds JAX may run from the start")
    ap.add_argument("--compile-job", default="", help=argparse.SUPPRESS)
    ap.add_argument("--jax", action="store_true", help="time the JAX peer (one process, no torchrun)")
    ap.add_argument("--report", metavar="DIR", help="merge DIR's JSON files into a table and a PNG")
    ap.add_argument("--md", default="", help="with --report: the markdown file (default DIR/scaling.md)")
    ap.add_argument("--png", default="", help="with --report: the PNG (default DIR/scaling.png)")
    ap.add_argument("--keep-head", action="store_true", help="with --md: keep the text above the generated part")
    a = ap.parse_args()
    if a.compile_job:
        compile_job(a)
    elif a.report:
        report(a)
    elif a.launch:
        a.budget = a.budget if a.budget < 1e9 else 170.0
        launch(a)
    elif a.jax:
        jax_main(a)
    else:
        gpu_main(a)


if __name__ == "__main__":
    main()
