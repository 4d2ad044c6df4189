#!/usr/bin/env python3
"""Issue 24 part 2: why the held-out row program (bench/nvshmem_heldout/heat_rows.py) runs at
78 % of copy at 8192^2 per GPU where Listing 8 runs at 85 %, when their sweeps compile to the same
loop (20 loads, 4 stores, sm_90; performance.md 54). Source variants of the held-out program,
each one difference from Listing 8 taken away, compiled by appyc, every one checked against the
global NumPy run, then timed per iteration in interleaved rounds beside Listing 8 itself.

    python bench/gpu_heldout_variants.py --generate DIR          (here: writes DIR/*.py)
    torchrun --standalone --nproc-per-node 2 bench/gpu_heldout_variants.py --modules DIR --out $OUT
"""
import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

os.environ["NVSHMEM_DISABLE_NVLS"] = "1"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NCCL_NVLS_ENABLE"] = "0"
ROOT = Path(__file__).resolve().parents[1]
HELDOUT = ROOT / "bench" / "nvshmem_heldout"
sys.path.insert(0, str(ROOT / "tests" / "difftest"))
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(HELDOUT))

LAPLACE = ("{X}[1:R-1, 1:C-1] + c * ({X}[0:R-2, 1:C-1] + {X}[2:R, 1:C-1] + {X}[1:R-1, 0:C-2]\n"
           "                                                 + {X}[1:R-1, 2:C] - 4.0 * {X}[1:R-1, 1:C-1])")
# Listing 8's form: 0.2 * (centre + 4 neighbours) = U + 0.2 * (laplacian), c = 0.2.
L8_FORM = ("0.2 * ({X}[1:R-1, 1:C-1] + {X}[1:R-1, 0:C-2] + {X}[1:R-1, 2:C]\n"
           "                                 + {X}[2:R, 1:C-1] + {X}[0:R-2, 1:C-1])")


def swap_lines(text, first, second):
    return text.replace(first + "\n" + second, second + "\n" + first)


def order_edits(text):
    """The put to the upper neighbour first, as Listing 8's (its waits are in Listing 8's order
    already: the halo from below first)."""
    for X, f in (("U", "got_u"), ("V", "got_v")):
        text = swap_lines(text, f"        nvshmem.Putmem({X}[0, :], {X}[R - 2, :], south, {f}[0], step + 1)",
                          f"        nvshmem.Putmem({X}[R - 1, :], {X}[1, :], north, {f}[1], step + 1)")
    return text


def interior_edits(text):
    """Halo puts of the interior columns only, as Listing 8's."""
    for X in ("U", "V"):
        for row in ("0", "R - 2", "R - 1", "1"):
            text = text.replace(f"{X}[{row}, :]", f"{X}[{row}, 1:C-1]")
    return text


def const_edits(text):
    return text.replace("+ c * (", "+ 0.1 * (")


def l8_form_edits(text):
    for X in ("U", "V"):
        text = text.replace(LAPLACE.format(X=X), L8_FORM.format(X=X))
    return text


def load_calls(line):
    """(start, end) of every `tl.load(...)` in a line, parentheses balanced."""
    spans, at = [], 0
    while (start := line.find("tl.load(", at)) >= 0:
        depth, i = 0, start + len("tl.load")
        while True:
            depth += {"(": 1, ")": -1}.get(line[i], 0)
            i += 1
            if depth == 0:
                break
        spans.append((start, i))
        at = i
    return spans


AFTER = '''
@triton.jit
def _probe_after(x):
    # 0 for every x, through an IEEE product and conversion ptxas cannot fold (x * 0 is NaN for
    # NaN and infinities, whose conversion gives 0): an address offset that makes a load wait
    # for x.
    return tl.inline_asm_elementwise("{ .reg .f64 t; mul.rn.f64 t, $1, 0d0000000000000000; cvt.rzi.s32.f64 $0, t; }",
                                     "=r,d", [x], dtype=tl.int32, is_pure=True, pack=1)


@triton.jit
def _probe_arrived(x):
    # A CTA barrier that every thread reaches only once x has arrived (its predicate reads x), so
    # the loads after it, of every warp, find the lines the loads of x brought into the L1.
    return tl.inline_asm_elementwise(
        "{ .reg .pred q, r; setp.eq.f64 q, $1, $1; bar.red.or.pred r, 0, q; selp.u32 $0, 1, 0, r; }",
        "=r,d", [x], dtype=tl.int32, is_pure=False, pack=1)
'''


def two_waves(text, by_mask=False, on="_wave_up + _wave_down", barrier=False):
    """Module edit: each sweep's loads in two waves, the vertical neighbours (rows p0 - 1 and
    p0 + 1, which cover every row the program reads) first, the others after them: their
    addresses take an offset of 0 computed from the first wave's values (by_mask: their masks
    a test of it), so no schedule can issue them before those lines are in the L1."""
    out = []
    for line in text.splitlines(keepends=True):
        if "tl.store(" not in line or "(_p0[:, None] - 1)" not in line:
            out.append(line)
            continue
        indent = line[:len(line) - len(line.lstrip())]
        spans = load_calls(line)
        pieces, names, last = [], {}, 0
        for start, end in spans:
            call = line[start:end]
            pieces.append(line[last:start])
            if "(_p0[:, None] - 1)" in call or "(_p0[:, None] + 1)" in call:
                name = "_wave_up" if "- 1)" in call.split("*")[0] else "_wave_down"
                names[name] = call
                pieces.append(name)
            elif barrier:
                pieces.append(call)
            elif by_mask:
                assert call.count("mask=") == 1, call
                pieces.append(call.replace("mask=", "mask=(_wave_zero == 0) & "))
            else:
                base = call[len("tl.load("):].split(" + ", 1)
                pieces.append(f"tl.load({base[0]} + _wave_zero + {base[1]}")
            last = end
        pieces.append(line[last:])
        assert set(names) == {"_wave_up", "_wave_down"}, names
        out += [f"{indent}{n} = {c}\n" for n, c in names.items()]
        if barrier:
            out.append(f"{indent}_probe_arrived({on})\n")
        else:
            out.append(f"{indent}_wave_zero = _probe_after({on})\n")
        out.append("".join(pieces))
    text = "".join(out)
    at = text.index("@triton.jit(do_not_specialize")
    return text[:at] + AFTER.lstrip("\n") + "\n\n" + text[at:]


def two_waves_by_mask(text):
    return two_waves(text, by_mask=True)


def barrier_waves(text):
    """The vertical neighbours first, then a CTA barrier that waits for their values, then the
    other loads unchanged (no address or mask depends on the first wave)."""
    return two_waves(text, barrier=True)


def two_waves_on_down(text):
    """The second wave waits for the row below only (no extra add, nothing else reads the wave
    zero's operand in another order)."""
    return two_waves(text, on="_wave_down")


ROLLING = """\
{i}_nstrips{k} = tl.cdiv((N - 1) - 1, {w})
{i}_nchunks{k} = tl.cdiv((M - 1) - 1, {h})
{i}for _vp{k} in range(_pid, _nstrips{k} * _nchunks{k}, _nprog):
{i}    _j{k} = 1 + (_vp{k} % _nstrips{k}) * {w} + tl.arange(0, {w})
{i}    _jm{k} = _j{k} < (N - 1)
{i}    _r0{k} = 1 + (_vp{k} // _nstrips{k}) * {h}
{i}    _r1{k} = tl.minimum(_r0{k} + {h}, M - 1)
{i}    _prev{k} = tl.load({x} + (_r0{k} - 1) * {x}_stride0 + _j{k} * {x}_stride1, mask=_jm{k})
{i}    _cur{k} = tl.load({x} + _r0{k} * {x}_stride0 + _j{k} * {x}_stride1, mask=_jm{k})
{i}    _nxt{k} = tl.load({x} + (_r0{k} + 1) * {x}_stride0 + _j{k} * {x}_stride1, mask=_jm{k})
{i}    for _r{k} in range(_r0{k}, _r1{k}):
{i}        _nn{k} = tl.load({x} + (_r{k} + 2) * {x}_stride0 + _j{k} * {x}_stride1, mask=_jm{k} & (_r{k} + 2 < M))
{i}        _left{k} = tl.load({x} + _r{k} * {x}_stride0 + (_j{k} - 1) * {x}_stride1, mask=_jm{k})
{i}        _right{k} = tl.load({x} + _r{k} * {x}_stride0 + (_j{k} + 1) * {x}_stride1, mask=_jm{k})
{i}        tl.store({y} + _r{k} * {y}_stride0 + _j{k} * {y}_stride1, 0.2 * _appyc_np_float(_cur{k} + _left{k} + _right{k} + _nxt{k} + _prev{k}), mask=_jm{k})
{i}        _prev{k} = _cur{k}
{i}        _cur{k} = _nxt{k}
{i}        _nxt{k} = _nn{k}
"""


def rolling_rows(height, width):
    """Module edit (Listing 8 only): each sweep walks a strip of `width` columns down `height`
    rows, keeping the rows above, at and below the stored one in registers, so each row comes
    from memory once per strip (one load ahead in flight) instead of the 2-D tile's five loads
    of which the L1 serves three."""
    def edit(text):
        block = re.compile(r"( {12})_n(\d+)_1 = tl\.maximum\(.*?\n(?= {12}if GRID_SYNC:)", re.S)

        def replace(m):
            body = m.group(0)
            dst = re.search(r"tl\.store\((\w+) \+", body).group(1)
            src = re.search(r"tl\.load\((\w+) \+", body).group(1)
            return ROLLING.format(i=m.group(1), k=m.group(2), w=width, h=height, x=src, y=dst)

        changed, count = block.subn(replace, text)
        assert count == 2, count
        return changed
    edit.__name__ = f"rolling_rows_{height}_{width}"
    return edit


# name -> (source edits, the c the result is checked with (None: the case's own), module edits,
# environment while it runs); "L8" (Listing 8 itself) is added to every run
VARIANTS = {
    "heldout": ([], None, [], {}),
    "c constant": ([const_edits], 0.1, [], {}),
    "interior halos": ([interior_edits], None, [], {}),
    "L8 put order": ([order_edits], None, [], {}),
    "L8 arithmetic": ([l8_form_edits], 0.2, [], {}),
    "all but arithmetic": ([const_edits, order_edits, interior_edits], 0.1, [], {}),
    "all four": ([order_edits, interior_edits, l8_form_edits], 0.2, [], {}),
    "heldout, two waves": ([], None, [two_waves], {}),
    "interior halos, two waves": ([interior_edits], None, [two_waves], {}),
    "heldout, two waves, no cap": ([], None, [two_waves], {"APPYC_NVSHMEM_MAXNREG": "0"}),
    "heldout, two waves, cap 72": ([], None, [two_waves], {"APPYC_NVSHMEM_MAXNREG": "72"}),
    "heldout, masked waves": ([], None, [two_waves_by_mask], {}),
    "heldout, masked waves, cap 72": ([], None, [two_waves_by_mask], {"APPYC_NVSHMEM_MAXNREG": "72"}),
    "heldout, masked waves, no cap": ([], None, [two_waves_by_mask], {"APPYC_NVSHMEM_MAXNREG": "0"}),
    "interior halos, masked waves": ([interior_edits], None, [two_waves_by_mask], {}),
    "heldout, barrier waves": ([], None, [barrier_waves], {}),
    "heldout, barrier waves, cap 72": ([], None, [barrier_waves], {"APPYC_NVSHMEM_MAXNREG": "72"}),
    "heldout, barrier waves, no cap": ([], None, [barrier_waves], {"APPYC_NVSHMEM_MAXNREG": "0"}),
    "interior halos, barrier waves": ([interior_edits], None, [barrier_waves], {}),
    "heldout, waves on down": ([], None, [two_waves_on_down], {}),
    "heldout, waves on down, cap 72": ([], None, [two_waves_on_down], {"APPYC_NVSHMEM_MAXNREG": "72"}),
    "heldout, MVL 1024, cap 128": ([], None, [], {"APPYC_MVL": "1024", "APPYC_NVSHMEM_MAXNREG": "128"}),
}
L8_VARIANTS = {
    "L8": ([], {}),
    "L8, two waves": ([two_waves], {}),
    "L8, two waves, no cap": ([two_waves], {"APPYC_NVSHMEM_MAXNREG": "0"}),
    "L8, masked waves": ([two_waves_by_mask], {}),
    "L8, masked waves, cap 72": ([two_waves_by_mask], {"APPYC_NVSHMEM_MAXNREG": "72"}),
    "L8, masked waves, no cap": ([two_waves_by_mask], {"APPYC_NVSHMEM_MAXNREG": "0"}),
    "L8, barrier waves": ([barrier_waves], {}),
    "L8, barrier waves, cap 72": ([barrier_waves], {"APPYC_NVSHMEM_MAXNREG": "72"}),
    "L8, barrier waves, no cap": ([barrier_waves], {"APPYC_NVSHMEM_MAXNREG": "0"}),
    "L8, rolling 64x512": ([rolling_rows(64, 512)], {}),
    "L8, rolling 256x512": ([rolling_rows(256, 512)], {}),
    "L8, rolling 64x1024": ([rolling_rows(64, 1024)], {}),
    "L8, rolling 64x256": ([rolling_rows(64, 256)], {}),
    "L8, rolling 64x1024, no cap": ([rolling_rows(64, 1024)], {"APPYC_NVSHMEM_MAXNREG": "0"}),
    "L8, rolling 64x512, cap 128": ([rolling_rows(64, 512)], {"APPYC_NVSHMEM_MAXNREG": "128"}),
    "L8, MVL 1024, cap 128": ([], {"APPYC_MVL": "1024", "APPYC_NVSHMEM_MAXNREG": "128"}),
    "L8, waves on down": ([two_waves_on_down], {}),
    "L8, waves on down, cap 72": ([two_waves_on_down], {"APPYC_NVSHMEM_MAXNREG": "72"}),
}


def module_name(name):
    return "heldout_" + re.sub(r"\W+", "_", name)


def generate(directory, appyc):
    directory.mkdir(parents=True, exist_ok=True)
    base = (HELDOUT / "heat_rows.py").read_text()
    def edited(text, edits, name):
        for edit in edits:
            changed = edit(text)
            assert changed != text, (name, edit.__name__)
            text = changed
        return text

    for name, (edits, _, module_edits, _) in VARIANTS.items():
        src = directory / f"{module_name(name)}_src.py"
        src.write_text(edited(base, edits, name))
        gen = directory / f"{module_name(name)}.py"
        subprocess.run([appyc, str(src), "-o", str(gen)], check=True)
        gen.write_text(edited(gen.read_text(), module_edits, name))
    for name, (module_edits, _) in L8_VARIANTS.items():
        gen = directory / f"{module_name(name)}.py"
        subprocess.run([appyc, str(ROOT / "samples" / "nvshmem_jacobi2d_l8.py"), "-o", str(gen)], check=True)
        gen.write_text(edited(gen.read_text(), module_edits, name))


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(args):
    import numpy as np
    import torch
    import torch.distributed as dist

    from gpu_nvshmem import copy_bandwidth, microseconds_per_iteration
    from heat_rows_case import HeatRows

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    started = time.monotonic()

    def log(*a):
        if rank == 0:
            print(f"[{time.monotonic() - started:6.1f}s]", *a, flush=True)

    wanted = [n for n in list(VARIANTS) + list(L8_VARIANTS) if not args.only or n in args.only.split(";")]
    mods = {name: load(Path(args.modules) / f"{module_name(name)}.py", module_name(name)) for name in wanted}
    env = {**{n: v[3] for n, v in VARIANTS.items()}, **{n: v[1] for n, v in L8_VARIANTS.items()}}

    def environment(name):
        for k in ("APPYC_NVSHMEM_MAXNREG", "APPYC_MVL"):
            os.environ.pop(k, None)
        os.environ.update(env[name])
    result = {"world": world, "device": torch.cuda.get_device_name(device), "correct": {}, "us": {}}

    def symmetric(mod, a):
        return mod._appyc_nvshmem_symmetric(torch.from_numpy(np.ascontiguousarray(a)).to(device))

    for name, mod in list(mods.items()):  # each variant against the global NumPy run
        environment(name)
        c = VARIANTS[name][1] if name in VARIANTS else 0.2
        case = HeatRows(rows=61, cols=203, steps=5, c=0.15 if c is None else c)
        U, V, cc, R, C, steps = case.make_args(rank, world)
        U, V = symmetric(mod, U), symmetric(mod, V)
        if name in VARIANTS:
            mod.heat_rows(U, V, cc, R, C, steps)
        else:  # Listing 8 is this heat step with c = 0.2
            mod.jacobi_2d(U, V, R, C, steps)
        torch.cuda.synchronize()
        parts = [torch.empty_like(U[1:-1]) for _ in range(world)]
        dist.all_gather(parts, U[1:-1].contiguous())
        err = float(np.abs(torch.cat(parts).cpu().numpy() - case.expected(world)).max())
        result["correct"][name] = err
        log("check", name, f"max error {err:.2e}")
        if not err < 1e-9:  # a wrong variant is reported and not timed
            log("WRONG", name, "dropped from the timing")
            del mods[name]
    result["copy_GBps"] = copy_bandwidth(torch, dist, device)
    log(f"copy {result['copy_GBps']:.0f} GB/s")
    for n in args.sizes:
        shape = (n + 2, n)
        rng = np.random.default_rng(rank)
        arrays = {}
        for rnd in range(args.rounds):
            order = list(mods) if rnd % 2 == 0 else list(reversed(mods))
            for name in order:
                mod = mods[name]
                environment(name)
                if name not in arrays:  # one pair a module, kept for every round
                    arrays[name] = (symmetric(mod, rng.standard_normal(shape)),
                                    symmetric(mod, rng.standard_normal(shape)))
                A, B = arrays[name]
                if name in L8_VARIANTS:
                    fn = lambda t: mod.jacobi_2d(A, B, n + 2, n, t)  # noqa: E731
                else:
                    fn = lambda t: mod.heat_rows(A, B, 0.1, n + 2, n, t)  # noqa: E731
                us = microseconds_per_iteration(fn, 20, 220, 3)
                # two sweeps an iteration, 16 bytes an element each (read + written)
                pct = 100 * 2 * 16 * n * n / (us * 1e-6) / 1e9 / result["copy_GBps"]
                result["us"].setdefault(str(n), {}).setdefault(name, []).append(us)
                log(f"n={n} round {rnd} {name}: {us:.1f} us/iteration, {pct:.1f} % of copy")
    result["programs"] = {name: [(c.n_regs, c.n_spills, p) for c, p in mod._APPYC_NVSHMEM_STATE["programs"].values()]
                          for name, mod in mods.items()}
    if rank == 0:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "heldout_variants.json").write_text(json.dumps(result, indent=1))
    dist.barrier()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--generate", help="write the variants' sources and modules into this folder")
    ap.add_argument("--appyc", default=str(ROOT / "target" / "release" / "appyc"))
    ap.add_argument("--modules", help="the folder --generate wrote")
    ap.add_argument("--out", default=os.environ.get("OUT", "heldout_variants_out"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[8192])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="variant names separated by ';' (default: all)")
    a = ap.parse_args()
    if a.generate:
        generate(Path(a.generate), a.appyc)
    else:
        main(a)
