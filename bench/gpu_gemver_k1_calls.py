#!/usr/bin/env python3
"""Issue 23, gemver (natural) at the `paper` size on one GPU: the first kernel's shape, timed as
scripts/bench_npbench.py times a call (restore, synchronise, call, synchronise).

bench/gpu_gemver_kernels.py found appyc's first kernel (A updated, A^T y down split row ranges)
at 0.296 ms back to back on an H200 with the tuner's pick (MVL 64, 8 warps, 32-row tiles, 8
programs per SM for the split), where hand-written kernels of the same structure took 0.265 ms
with 16-row tiles, MVL 128, 4 warps and 16 programs per SM. This probe asks the same of the
generated module itself, at the call level: its two launchers with the configurations given,
for every k1 candidate of the module's table, crossed with the tile rows (the module's text
with 32 replaced, the probe's own edit) and the split's programs per SM (the module constant).
Each is timed three ways: as the benchmark times a call; the same with a read of a scratch
buffer after the restore (so that the restore's written lines have left the L2 when the call
starts); and back to back without restores (CUDA events). Every variant is checked against
NumPy first; the variants are interleaved over rounds.

    python bench/gpu_gemver_k1_calls.py --modules DIR --out DIR   (DIR from bench_npbench --generate)
"""
import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_gemver_host import GemverCase  # noqa: E402


def load_text(text, name, path):
    spec = importlib.util.spec_from_loader(name, loader=None, origin=str(path))
    mod = importlib.util.module_from_spec(spec)
    mod.__file__ = str(path)
    sys.modules[name] = mod
    exec(compile(text, str(path), "exec"), mod.__dict__)
    return mod


def with_tile_rows(text, rows):
    """The module with kernel1's row tiles of `rows` rows instead of 32 (each site must exist)."""
    if rows == 32:
        return text
    sites = ["_s_rows = tl.zeros((32, MVL)", "range(_appyc_rows_lo, _appyc_rows_hi, 32)",
             "i = _i_base + tl.arange(0, 32)", "int(N) - int(0), 32, A.device)"]
    for s in sites:
        assert text.count(s) == 1, s
        text = text.replace(s, s.replace("32", str(rows)))
    return text


def with_hoisted_vectors(text):
    """kernel1 with v1[j] and v2[j] loaded once before the row loop instead of once a row tile
    (what a loop-invariant load hoist would print)."""
    loop = "    for _i_base in range(_appyc_rows_lo, _appyc_rows_hi,"
    assert text.count(loop) == 1
    for v in ("v1", "v2"):
        load = f"tl.load({v} + j * {v}_stride0, mask=j_mask)"
        assert text.count(load) == 1, load
        text = text.replace(load, f"_{v}_j")
        text = text.replace(loop, f"    _{v}_j = {load}\n{loop}")
    return text


def with_chunked_combine(text, chunk):
    """kernel1's last-arriving split summing the splits' partials `chunk` at a time (one 2-D load
    and a sum each) instead of one load after another: with tens of splits the serial loads are
    one L2 round trip each, at the kernel's tail."""
    if chunk <= 1:
        return text
    old = """        _appyc_total = tl.load(_appyc_part, cache_modifier=".cg")
        for _appyc_k in range(1, tl.num_programs(1)):
            _appyc_total = _appyc_total + tl.load(_appyc_part + _appyc_k * _appyc_stride, cache_modifier=".cg")
"""
    new = f"""        _appyc_total = tl.zeros((MVL,), _s_rows.dtype)
        for _appyc_k in range(0, tl.num_programs(1), {chunk}):
            _appyc_ks = _appyc_k + tl.arange(0, {chunk})
            _appyc_total = _appyc_total + tl.sum(tl.load(_appyc_part[None, :] + _appyc_ks[:, None] * _appyc_stride, mask=(_appyc_ks < tl.num_programs(1))[:, None], other=0.0, cache_modifier=".cg"), axis=0)
"""
    assert text.count(old) == 1
    return text.replace(old, new)


def with_summed_rows(text):
    """kernel1 summing each row tile's products down its rows as it goes (a vector of MVL
    partial sums) instead of keeping a tile-shaped accumulator: fewer registers a program."""
    sites = [("_s_rows = tl.zeros((", "_s_rows = tl.zeros(("),
             ("        _s_rows = _s_rows + tl.where(", "        _s_rows = _s_rows + tl.sum(tl.where("),
             ("i_mask[:, None]), 0)  # scripts/npbench_natural/gemver.py:22", "i_mask[:, None]), 0), axis=0)"),
             ("tl.store(_appyc_part + _appyc_split * _appyc_stride, tl.sum(_s_rows, axis=0))",
              "tl.store(_appyc_part + _appyc_split * _appyc_stride, _s_rows)")]
    for old, new in sites:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    start = text.index("_s_rows = tl.zeros((") + len("_s_rows = tl.zeros((")
    end = text.index(", MVL)", start)
    return text[:start] + "MVL," + text[end + 5:]


def main(args):
    import torch

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "gemver_k1_calls.log", "a")

    def say(text):
        print(text, flush=True)
        log.write(text + "\n")
        log.flush()

    path = Path(args.modules) / "natural" / "gemver.py"
    text = path.read_text()
    mods = {}
    for rows in args.rows:
        for hoist in args.hoist:
            for chunk in args.chunk:
                t = with_chunked_combine(with_tile_rows(text, rows), chunk)
                t = with_hoisted_vectors(t) if hoist & 1 else t
                t = with_summed_rows(t) if hoist & 2 else t
                mods[(rows, hoist, chunk)] = load_text(t, f"gemver_rows{rows}_h{hoist}_c{chunk}", path)
    case = GemverCase()
    N, alpha, beta, dev, restore = case.N, case.alpha, case.beta, case.dev, case.restore

    def launchers(mod, c1, per_sm):
        mod._APPYC_SPLIT_PROGRAMS_PER_SM = per_sm
        mod._APPYC_SPLIT_STATE.pop(("programs", dev["A"].device), None)

        def run():
            mod._launch_gemver_kernel1.__wrapped__(dev["A"], dev["u1"], dev["v1"], dev["u2"], dev["v2"], dev["y"],
                                                   dev["x"], dev["z"], N, beta, c1)
            mod._launch_gemver_kernel2.__wrapped__(dev["A"], dev["x"], dev["w"], N, alpha, tuple(args.k2))
        return run

    scratch = torch.empty(args.clean_mb << 17, dtype=torch.float64, device="cuda")
    sink = torch.empty((), dtype=torch.float64, device="cuda")

    def bench_style(fn, reps, clean=False):
        samples = []
        for _ in range(reps):
            restore()
            if clean:  # a read of a scratch buffer: the restore's written lines leave the L2
                torch.sum(scratch, dim=0, out=sink)
            torch.cuda.synchronize()
            t = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            samples.append((time.perf_counter() - t) * 1e3)
        return statistics.median(samples)

    variants = {}
    for (rows, hoist, chunk), mod in mods.items():
        for c1 in args.k1 or mod._gemver_kernel1_tuning.candidates:
            for per_sm in args.per_sm:
                key = (rows, tuple(c1), per_sm, hoist, chunk)
                fn = launchers(mod, tuple(c1), per_sm)
                restore()
                fn()
                torch.cuda.synchronize()
                err = case.error()
                assert err < 1e-9, (key, err)
                variants[key] = (fn, mod, per_sm)
    say(f"device {torch.cuda.get_device_name()}; {len(variants)} variants checked against NumPy; k2 {args.k2}")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def back_to_back(fn, reps):
        restore()
        fn()
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / reps

    modes = {"call": lambda fn: bench_style(fn, args.reps),
             "call_clean_l2": lambda fn: bench_style(fn, args.reps, clean=True),
             "back_to_back": lambda fn: back_to_back(fn, args.reps)}
    times = {(k, m): [] for k in variants for m in modes}
    keys = list(variants)
    for r in range(args.rounds):
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            fn, mod, per_sm = variants[k]
            launchers(mod, k[1], per_sm)  # the module constant of this variant
            for m, timer in modes.items():
                times[(k, m)].append(timer(fn))
    rows_out = []
    med = lambda ts: statistics.median(ts)  # noqa: E731
    for k in sorted(keys, key=lambda k: med(times[(k, "back_to_back")])):
        rows_out.append({"rows": k[0], "k1": list(k[1]), "per_sm": k[2], "hoist": k[3], "chunk": k[4],
                         **{m: times[(k, m)] for m in modes}})
        say(f"rows {k[0]:2d} k1 {k[1]} per_sm {k[2]:2d} hoist {k[3]} chunk {k[4]}: median ms " +
            ", ".join(f"{m} {med(times[(k, m)]):.4f}" for m in modes))
    (out / "gemver_k1_calls.json").write_text(json.dumps({"device": torch.cuda.get_device_name(),
                                                          "k2": args.k2, "variants": rows_out}, indent=1))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--modules", required=True)
    p.add_argument("--out", default="gemver_k1_calls_out")
    p.add_argument("--rows", type=int, nargs="+", default=[32, 16])
    p.add_argument("--per-sm", type=int, nargs="+", default=[8, 16])
    p.add_argument("--k2", type=int, nargs=2, default=[512, 4])
    p.add_argument("--k1", type=lambda c: tuple(int(v) for v in c.split(",")), nargs="+",
                   help="k1 configurations MVL,WARPS (default: the module's whole table)")
    p.add_argument("--hoist", type=int, nargs="+", default=[0], help="bits: 1 v1/v2 hoisted, 2 rows summed into a vector each tile (0: as generated)")
    p.add_argument("--chunk", type=int, nargs="+", default=[1],
                   help="partials summed this many at a time by the last split (1: as generated)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--clean-mb", type=int, default=256, help="scratch read after the restore (call_clean_l2)")
    p.add_argument("--reps", type=int, default=40)
    main(p.parse_args())
