#!/usr/bin/env python3
"""Where Listing 8's 4-GPU time goes (issue 26): the generated modules with one change at a time,
made to their text (as gpu_nvshmem_variants.py does), timed per rank on 1, 2 and 4 GPUs, and
`%globaltimer` stamps of every phase of the persistent loop by the first and the last program.

Variants (each first checked against NumPy on a small grid, except `nocomm`):

    gen         the module as generated
    whole       Listing 8's puts of whole rows (A[1, :] instead of A[1, 1:N-1]): 16-byte
                aligned source and destination, as `#pragma distribute` puts them
    split       the put helper sends a misaligned head on its own, then the aligned rest
    remote      the put helper copies with the program's own loads and stores through
                nvshmem_ptr (the peer's address over NVLink), then signals, instead of
                NVSHMEM's block copy (falls back to it where nvshmem_ptr gives no address)
    nocomm      puts and waits removed, barriers kept: each GPU's compute alone
    +stamps     the same with stamps: per phase, the time the first and the last program
                entered it, averaged over the iterations (put, waits, barrier, sweep)

Every variant's `up`/`down` neighbours are left unspecialised (do_not_specialize), so a PE
whose neighbour is PE 1 runs the same compiled kernel as the others and 2 and 4 GPUs reuse the
1-GPU compiles.

    torchrun --standalone --nproc-per-node W bench/gpu_scaling_probe.py --modules DIR --out $OUT
    python3 bench/gpu_scaling_probe.py --emit DIR --modules golden   # the edited modules, to check
                                                                     # them on the CPU (stand-in, sm_90 link)
"""
import argparse
import importlib.util
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

os.environ["NVSHMEM_DISABLE_NVLS"] = "1"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ.setdefault("NVSHMEM_SYMMETRIC_SIZE", "32G")
ROOT = Path(__file__).resolve().parents[1]
for _p in (ROOT / "tests" / "difftest", ROOT / "python", ROOT / "scripts", ROOT / "samples"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

STAMP_SLOTS = 1 << 16  # phases a stamped launch may run (per program row)

# sample -> (module, kernel, neighbour parameters)
SAMPLES = {
    "l8": ("nvshmem_jacobi2d_l8", "_jacobi_2d_persistent0", ("up", "down")),
    # Listing 8 as generated before the neighbour PEs were left unspecialised (the module the
    # scaling harness's l8_spec row loads), kept as it is: a kernel per PE's specialisation.
    "l8spec": ("nvshmem_jacobi2d_l8_spec", "_jacobi_2d_persistent0", None),
    "dist": ("distribute_jacobi2d", "_jacobi_2d_distributed", ("_appyc_up", "_appyc_down")),
    "grid3d": ("nvshmem_jacobi3d_grid", "_jacobi_3d_persistent0", ("b0", "a0", "b1", "a1", "b2", "a2")),
}

# ------------------------------------------------------------------------------------------
# text edits


def kernel_span(text, kernel):
    start = text.index(f"def {kernel}(")
    end = text.find("\n\n\n", start) + 1
    return start, end


def unspecialised(text, kernel, names):
    """The neighbour PEs as plain integers: a PE equal to 1 would make its own specialisation."""
    start = text.index(f"def {kernel}(")
    deco = text.rindex("@triton.jit(do_not_specialize=[", 0, start)
    line_end = text.index("\n", deco)
    old = text[deco:line_end]
    if all(f'"{n}"' in old for n in names):
        return text  # generated so (appyc leaves a put's PE unspecialised since issue 26)
    new = old.replace('"_phase_hi"]', '"_phase_hi", ' + ", ".join(f'"{n}"' for n in names) + "]")
    assert new != old, old
    return text[:deco] + new + text[line_end:]


STAMP = ("{ind}if (_pid == 0) | (_pid == _nprog - 1):\n"
         "{ind}    tl.store(_stamps + (_pid != 0).to(tl.int64) * {slots} + (_phase - _phase_lo), _appyc_nvshmem_clock())\n")

PROBE_TAIL = '''

# --- probe: stamps ----------------------------------------------------------------------------
_PROBE_STAMPS = [None]


def _probe_persistent(kernel, phases, work, args, *rest, **kw):
    stamps = _PROBE_STAMPS[0]
    if stamps is None:
        device = next(a.device for a in args if isinstance(a, torch.Tensor))
        stamps = _PROBE_STAMPS[0] = torch.zeros(2 * {slots}, dtype=torch.int64, device=device)
    return _appyc_nvshmem_persistent(kernel, phases, work, tuple(args) + (stamps,), *rest, **kw)
'''


def stamped(text, kernel):
    """Stamps: the kernel takes `_stamps` (before `_phase_lo`); at the loop's start and after
    every phase the first and the last program store %globaltimer at the phase's index, so
    stamps[p + 1] - stamps[p] is phase p's time (its barrier included)."""
    s, e = kernel_span(text, kernel)
    body = text[s:e]
    body = body.replace(", _phase_lo, _phase_hi, _sync,", ", _stamps, _phase_lo, _phase_hi, _sync,", 1)
    body = body.replace("    _phase = _phase_lo\n", "    _phase = _phase_lo\n" + STAMP.format(ind="    ", slots=STAMP_SLOTS), 1)
    assert "        _phase += 1\n" in body
    body = body.replace("        _phase += 1\n", "        _phase += 1\n" + STAMP.format(ind="        ", slots=STAMP_SLOTS), 1)
    text = text[:s] + body + text[e:]
    launch = f"_appyc_nvshmem_persistent(\n        {kernel},"
    assert launch in text
    text = text.replace(launch, f"_probe_persistent(\n        {kernel},")
    return text + PROBE_TAIL.replace("{slots}", str(STAMP_SLOTS))


def whole_rows(text, kernel):
    """Listing 8's row puts over whole rows: dst/src at column 0, N elements."""
    s, e = kernel_span(text, kernel)
    lines = text[s:e].split("\n")
    count = 0
    for i, line in enumerate(lines):
        if "_appyc_nvshmem_put(" in line:
            new = re.sub(r" \+ 1 \* ([AB])_stride1", "", line).replace("(N - 1) - (1)", "N")
            new = new.replace("_appyc_nvshmem_put(A, ", "_appyc_nvshmem_put(A, ").replace("_appyc_nvshmem_put(B, ", "_appyc_nvshmem_put(B, ")
            assert new != line, line
            lines[i] = new
            count += 1
    assert count == 4, count
    return text[:s] + "\n".join(lines) + text[e:]


def no_comm(text, kernel):
    """Puts and waits never run (under `if _phase_hi < 0:`, which the compiler cannot fold;
    removed outright, the kernel names no NVSHMEM symbol and NVSHMEM's module init fails);
    the grid barriers stay."""
    s, e = kernel_span(text, kernel)
    lines = text[s:e].split("\n")
    out = []
    for line in lines:
        if "_appyc_nvshmem_put(" in line or "= _appyc_nvshmem_wait(" in line:
            ind = line[:len(line) - len(line.lstrip())]
            out += [ind + "if _phase_hi < 0:", "    " + line]
        else:
            out.append(line)
    return text[:s] + "\n".join(out) + text[e:]


PUT_HEAD = "def _appyc_nvshmem_put(dst, src, rows, n, dst_row_stride, dst_stride, src_row_stride, src_stride, sig, pe,\n"
DENSE_OLD = '''        d = dst.to(tl.int64)
        s = src.to(tl.int64)
        nbytes = rows64 * n64 * ELEM
        if SIGNAL:'''
DENSE_SPLIT = '''        d = dst.to(tl.int64)
        s = src.to(tl.int64)
        nbytes = rows64 * n64 * ELEM
        # probe: a head up to d's next 16-byte boundary on its own when s is misaligned alike,
        # ordered before the rest's signal as the strided path orders its rows.
        head = (16 - d % 16) % 16
        if (head > 0) & (head < nbytes) & (s % 16 == d % 16):
            _appyc_nvshmem_putmem_block(d, s, head, pe32)
            tl.debug_barrier()
            if _appyc_nvshmem_thread0():
                _appyc_nvshmem_fence()
            tl.debug_barrier()
            d += head
            s += head
            nbytes -= head
        if SIGNAL:'''


def split_head(text):
    assert DENSE_OLD in text
    return text.replace(DENSE_OLD, DENSE_SPLIT, 1)


REMOTE_EXTERN_OLD = 'ret = tl.core.dtype("int64") if symbol == "nvshmem_signal_wait_until" else tl.core.dtype("int32")'
REMOTE_EXTERN_NEW = 'ret = tl.core.dtype("int64") if symbol in ("nvshmem_signal_wait_until", "nvshmem_ptr") else tl.core.dtype("int32")'
REMOTE_DECL = '_appyc_nvshmem_ptr = _appyc_nvshmem_extern("nvshmem_ptr", ("int64", "int32"))\n'
REMOTE_BODY = '''    pe32 = (tl.zeros((), tl.int32) + pe).to(tl.int32)
    peer = _appyc_nvshmem_ptr(dst.to(tl.int64), pe32)
    if peer != 0:
        # probe: the peer's memory is addressable (NVLink or this GPU): the program copies the
        # view itself, {chunk} elements a step, then signals after a fence as the strided path.
        far = peer.to(dst.dtype)
        total = (tl.zeros((), tl.int64) + rows) * n
        for start in range(0, total, {chunk}):
            i = start + tl.arange(0, {chunk}).to(tl.int64)
            r = i // n
            c = i - r * n
            m = i < total
            v = tl.load(src + r * src_row_stride + c * src_stride, mask=m)
            tl.store(far + r * dst_row_stride + c * dst_stride, v, mask=m)
        if SIGNAL:
            tl.debug_barrier()
            if _appyc_nvshmem_thread0():
                _appyc_nvshmem_fence()
                _appyc_nvshmem_signal_op(sig.to(tl.int64), tl.full((), 1, tl.int64), tl.full((), 10, tl.int32), pe32)
            tl.debug_barrier()
    else:
        _appyc_nvshmem_put_nvshmem(dst, src, rows, n, dst_row_stride, dst_stride, src_row_stride, src_stride, sig,
                                   pe, SIGNAL, BLOCKING)


@triton.jit
def _appyc_nvshmem_put_nvshmem(dst, src, rows, n, dst_row_stride, dst_stride, src_row_stride, src_stride, sig, pe,
'''


def remote(text, chunk=1024):
    """The put helper copies through nvshmem_ptr; the old helper, renamed, is the fallback."""
    assert REMOTE_EXTERN_OLD in text and PUT_HEAD in text
    text = text.replace(REMOTE_EXTERN_OLD, REMOTE_EXTERN_NEW, 1)
    anchor = "@triton.jit\ndef _appyc_nvshmem_thread0():"
    text = text.replace(anchor, REMOTE_DECL + "\n\n" + anchor, 1)
    at = text.index(PUT_HEAD)
    sig_end = text.index("\n", text.index("SIGNAL: tl.constexpr, BLOCKING: tl.constexpr):", at)) + 1
    return (text[:sig_end] + REMOTE_BODY.replace("{chunk}", str(chunk))
            + "                       SIGNAL: tl.constexpr, BLOCKING: tl.constexpr):\n" + text[sig_end:])


def variants(sample, base):
    """name -> module text of `sample`'s variants."""
    module, kernel, names = SAMPLES[sample]
    if names:
        base = unspecialised(base, kernel, names)
    out = {"gen": base, "gen+stamps": stamped(base, kernel)}
    if sample == "l8":
        out["nocomm"] = no_comm(base, kernel)
        out["whole"] = whole_rows(base, kernel)
        out["split"] = split_head(base)
    if sample in ("l8", "grid3d"):
        out["remote"] = remote(base)
    return out


def write_extras(args):
    """The scaling harness's probe rows (scripts/gpu_scaling.py, --only l8_spec,l8_nocomm):
    Listing 8 as generated before its neighbour PEs were left unspecialised (`--before`, a
    module generated by the older appyc) and the current one without its communication."""
    out = Path(args.write_extras)
    l8 = (Path(args.modules) / "nvshmem_jacobi2d_l8.py").read_text()
    (out / "nvshmem_jacobi2d_l8_nocomm.py").write_text(no_comm(l8, SAMPLES["l8"][1]))
    (out / "nvshmem_jacobi2d_l8_spec.py").write_text(Path(args.before).read_text())


def emit(args):
    out = Path(args.emit)
    out.mkdir(parents=True, exist_ok=True)
    for sample, (module, _, _) in SAMPLES.items():
        if not (Path(args.modules) / f"{module}.py").exists():
            continue
        base = (Path(args.modules) / f"{module}.py").read_text()
        for name, text in variants(sample, base).items():
            path = out / f"{sample}__{name.replace('+', '_')}.py"
            path.write_text(text)
            print(path)


# ------------------------------------------------------------------------------------------
# the GPU run


def phase_means(stamps, phases, per_iteration):
    """Mean time (us) of each phase of an iteration, for the first and the last program, over
    the iterations after the first (from a stamps tensor of one launch)."""
    import numpy as np

    s = stamps.view(2, STAMP_SLOTS)[:, :phases + 1].cpu().numpy().astype(np.int64)
    d = np.diff(s, axis=1)[:, per_iteration:]  # drop the first iteration (start-up)
    its = d.shape[1] // per_iteration
    d = d[:, :its * per_iteration].reshape(2, its, per_iteration)
    return {"first": [round(float(x) / 1e3, 2) for x in d[0].mean(axis=0)],
            "last": [round(float(x) / 1e3, 2) for x in d[1].mean(axis=0)],
            "iterations": int(its)}


def mod_text(mod):
    return Path(mod.__file__).read_text()


def main(args):
    import numpy as np
    import torch
    import torch.distributed as dist

    from gpu_scaling import microseconds_per_iteration
    from nvshmem_cases import Jacobi2D, JacobiGrid

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result = {"world": world, "device": torch.cuda.get_device_name(device), "n": args.n, "n3": args.n3, "rows": {}}

    def log(*a):
        if rank == 0:
            print(f"[probe w{world} {time.monotonic() - started:6.1f}s]", *a, flush=True)

    def save():
        if rank == 0:
            (out / f"probe_w{world}.json").write_text(json.dumps(result, indent=1))

    samples = args.samples.split(",")
    for sample in samples:
        module, kernel, _ = SAMPLES[sample]
        base = (Path(args.modules) / f"{module}.py").read_text()
        for name, text in variants(sample, base).items():
            if args.only and name not in args.only.split(","):
                continue
            if time.monotonic() - started > args.budget:
                log(sample, name, "skipped (budget)")
                continue
            path = tmp / f"{sample}__{name.replace('+', '_')}.py"
            path.write_text(text)
            spec = importlib.util.spec_from_file_location(path.stem, path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            row = {}
            s0 = time.monotonic()
            try:
                row.update(run_variant(sample, name, mod, args, rank, world, device, np, torch, dist,
                                       microseconds_per_iteration, Jacobi2D, JacobiGrid))
            except Exception as e:  # noqa: BLE001 - recorded
                row["failed"] = f"{type(e).__name__}: {e}"[:400]
                torch.cuda.synchronize()
            dist.barrier()
            row["kernels"] = [(c.n_regs, c.n_spills, p) for c, p in mod._APPYC_NVSHMEM_STATE["programs"].values()]
            row["wall_s"] = round(time.monotonic() - s0, 1)
            result["rows"][f"{sample}/{name}"] = row
            log(sample, name, json.dumps(row))
            save()
            torch.cuda.empty_cache()
    if args.smoke_harness and time.monotonic() - started < args.budget:
        # The scaling harness at its small sizes, in this process (the launch is paid once).
        import gpu_scaling

        ns = argparse.Namespace(out=str(out / "smoke"), modules=args.modules, quick=True, only="", scenarios="",
                                t1=5, reps=2, budget=max(10.0, args.budget + 60 - (time.monotonic() - started)))
        gpu_scaling.gpu_main(ns)
    save()


def run_variant(sample, name, mod, args, rank, world, device, np, torch, dist, per_iteration, Jacobi2D, JacobiGrid):
    row = {}

    def sym(a):
        if isinstance(a, np.ndarray):
            a = torch.from_numpy(np.ascontiguousarray(a))
        return mod._appyc_nvshmem_symmetric(a.to(device))

    # -- check (not for nocomm) ----------------------------------------------------------------
    if name != "nocomm":
        if sample == "dist":
            # Rows a multiple of 16 a PE and 64 columns: the timing case's specialisation.
            G = np.random.default_rng(53).standard_normal((64 * world, 64))
            import distribute_jacobi2d as source

            A, B = torch.from_numpy(G).to(device), torch.from_numpy(G + 0.5).to(device)
            mod.jacobi_2d(A, B, G.shape[0], G.shape[1], 3)
            RA, RB = G.copy(), G + 0.5
            source.jacobi_2d(RA, RB, G.shape[0], G.shape[1], 3)
            err = max(float(np.abs(A.cpu().numpy() - RA).max()), float(np.abs(B.cpu().numpy() - RB).max()))
        else:
            # M = 42 and N = 64 specialise as 8194 and 8192 do: one compile serves both.
            case = (Jacobi2D("x", rows=40, cols=64, T=3) if sample in ("l8", "l8spec")
                    else JacobiGrid("x", "jacobi_3d", (9, 11, 13), T=2, seed=17))
            a = [sym(x) if isinstance(x, np.ndarray) else x for x in case.make_args(rank, world)]
            getattr(mod, "jacobi_3d" if sample == "grid3d" else "jacobi_2d")(*a)
            torch.cuda.synchronize()
            mine = a[0].contiguous()
            parts = [torch.empty_like(mine) for _ in range(world)]
            dist.all_gather(parts, mine)
            err = float(np.abs(case.gather([(p.cpu().numpy(),) for p in parts]) - case.expected(world)).max())
        worst = torch.tensor([err], device=device)
        dist.all_reduce(worst, op=dist.ReduceOp.MAX)
        row["error"] = float(worst.item())
        row["ok"] = bool(row["error"] < 1e-9)
    # -- timing --------------------------------------------------------------------------------
    n = args.n if sample != "grid3d" else args.n3
    gen = torch.Generator(device=device)
    gen.manual_seed(7 + rank)
    if sample == "dist":
        G = torch.randn((n * world, n), generator=gen, device=device, dtype=torch.float64)
        A, B = G.clone(), G.clone()
        del G

        def run(t):
            mod.jacobi_2d(A, B, n * world, n, t)
    else:
        shape = (n + 2,) * 3 if sample == "grid3d" else (n + 2, n)
        A = sym(torch.randn(shape, generator=gen, device=device, dtype=torch.float64))
        B = sym(A.clone())
        fn = getattr(mod, "jacobi_3d" if sample == "grid3d" else "jacobi_2d")

        def run(t):
            fn(A, B, *A.shape, t)
    us, t2 = per_iteration(run, 5, args.reps)
    ranks = [None] * world
    dist.all_gather_object(ranks, us)
    row.update({"us": max(ranks), "us_ranks": [round(u, 2) for u in ranks], "t2": t2})
    # -- stamps ------------------------------------------------------------------------------
    if name.endswith("+stamps"):
        mod._PROBE_STAMPS[0].zero_()
        dist.barrier()
        run(args.stamp_iterations)
        torch.cuda.synchronize()
        text = mod_text(mod)
        s, e = kernel_span(text, SAMPLES[sample][1])
        per_it = int(re.search(r"\(persistent: (\d+) phase", text[s:e]).group(1))
        means = phase_means(mod._PROBE_STAMPS[0], per_it * args.stamp_iterations, per_it)
        allm = [None] * world
        dist.all_gather_object(allm, means)
        row["phases_us"] = allm
    return row


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT", "probe_out"))
    ap.add_argument("--modules", default=str(ROOT / "golden"))
    ap.add_argument("--samples", default="l8,dist,grid3d")
    ap.add_argument("--only", default="", help="variant names, comma-separated")
    ap.add_argument("--n", type=int, default=8192, help="2-D interior per GPU")
    ap.add_argument("--n3", type=int, default=128, help="3-D grid block per GPU")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--stamp-iterations", type=int, default=30)
    ap.add_argument("--budget", type=float, default=1e9)
    ap.add_argument("--smoke-harness", action="store_true", help="then scripts/gpu_scaling.py --quick in this process")
    ap.add_argument("--emit", default="", help="write the variants' modules to this directory and stop")
    ap.add_argument("--write-extras", default="", help="write gpu_scaling.py's probe-row modules into this directory")
    ap.add_argument("--before", default="", help="with --write-extras: Listing 8 as generated before")
    a = ap.parse_args()
    if a.write_extras:
        write_extras(a)
    elif a.emit:
        emit(a)
    else:
        main(a)
