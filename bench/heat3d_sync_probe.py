"""Issue 25, 3-D: where the blocked Heat-3D kernel's last 5 % go (docs/performance.md 48).

The generated kernel (codegen/triton/gluon3d.rs) runs Heat-3D 120^3 x 500 at 1.23-1.25x the
streaming bound (docs/performance.md 44); the target is 1.3x. It runs 500 groups with a grid
barrier after each, and the arrays live in the L2, so the barrier and the z-chunking are the
suspects. Variants of the generated module, made by editing its text (nothing here is
generated code of record):

  base       as generated
  volatile   the barrier polls with a volatile load, then one acquire add (fewer atomics at
             the counter's L2 slice while 264 programs spin)
  asm        the barrier polls with `ld.acquire.gpu` (inline PTX)
  nobar      no wait at the barrier (results wrong: only the ceiling of any cheaper sync)
  --alt N=P  another generated module: `flags` (each tile waits for its neighbours' flags, no
             grid barrier), `quad` (tiles split into quadrants, half the neighbours from
             registers)
  chunks=C   C z-chunks instead of the resident-balanced count (base and flags)

Every variant but `nobar` is checked bit-equal to `base` at an odd cube with odd steps (the
size threshold lowered to 0), and `base` against NumPy. Times: median of 7 calls after 2
warm-ups, CUDA events; bound = steps x 4 accesses x points x 8 B / copy bandwidth (1 GiB copy,
same call).

    python bench/heat3d_sync_probe.py --module .devcarry/hs/heat_3d.py --out $OUT
"""
import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time

import numpy as np

BARRIER = """            while gl.atomic_add(_sync, 0, sem="acquire") < _arrived:
                pass
"""
VARIANTS = {
    "base": BARRIER,
    "volatile": """            while gl.load(_sync, volatile=True) < _arrived:
                pass
            gl.atomic_add(_sync, 0, sem="acquire")
""",
    "asm": """            while gl.inline_asm_elementwise("ld.acquire.gpu.global.b64 $0, [$1];", "=l,l", [_sync], dtype=gl.int64, is_pure=False, pack=1) < _arrived:
                pass
""",
    "nobar": "",
}
CHUNKS = "chunks = max(1, min(planes, slots // xy))"

# Thread 0 alone arrives and spins, inside one inline-PTX block (as CUDA's cooperative-groups
# grid sync does); the block barriers around it hand the result to the other threads. `ARRIVE`
# and `POLL` fill the holes.
ONE_THREAD = (
    '{{ns}}.inline_asm_elementwise("{{{{ .reg .pred %p<2>; .reg .b32 %t; .reg .b64 %v; '
    'mov.u32 %t, %tid.x; setp.ne.u32 %p0, %t, 0; @%p0 bra L_D${{{{:uid}}}}; {arrive} '
    'L_S${{{{:uid}}}}: {poll} setp.lt.s64 %p1, %v, $2; @%p1 bra L_S${{{{:uid}}}}; {after} '
    'L_D${{{{:uid}}}}: mov.u32 $0, 0; }}}}", "=r,l,l", [{{ptr}}, {{target}}], '
    'dtype={{ns}}.int32, is_pure=False, pack=1)'
)
ONE_THREAD_FORMS = {
    # arrival as before (Triton's release add), thread 0 polls with ld.acquire
    "t0acq": ("", "ld.acquire.gpu.global.u64 %v, [$1];", ""),
    # polls relaxed, one acquire fence when the count is reached
    "t0relax": ("", "ld.relaxed.gpu.global.u64 %v, [$1];", "fence.acq_rel.gpu;"),
    # arrival by red.release (no reply awaited) inside the same block
    "t0red": ("red.release.gpu.global.add.u64 [$1], 1;", "ld.relaxed.gpu.global.u64 %v, [$1];",
              "fence.acq_rel.gpu;"),
}
PLAIN_BARRIER = """    tl.atomic_add(counter, 1, sem="release")
    while tl.atomic_add(counter, 0, sem="acquire") < target:
        pass
"""
GLUON_ARRIVE = """            gl.atomic_add(_sync, 1, sem="release")
"""


def one_thread(name, ns, ptr, target):
    arrive, poll, after = ONE_THREAD_FORMS[name]
    text = ONE_THREAD.format(arrive=arrive, poll=poll, after=after)
    text = text.replace("{{", "\x00").replace("}}", "\x01")
    text = text.replace("{ns}", ns).replace("{ptr}", ptr).replace("{target}", target)
    text = text.replace("$$", "$")
    return text.replace("\x00", "{").replace("\x01", "}")


def one_thread_variant(text, name):
    """The module with both barriers (blocked 3-D kernel, plain `_appyc_grid_barrier`) in form
    `name`; arrival stays Triton's add unless the form arrives itself."""
    arrive = ONE_THREAD_FORMS[name][0]
    g = "" if arrive else GLUON_ARRIVE
    text = text.replace(GLUON_ARRIVE + BARRIER,
                        g + "            _w = " + one_thread(name, "gl", "_sync", "_arrived") + "\n")
    p = "" if arrive else '    tl.atomic_add(counter, 1, sem="release")\n'
    return text.replace(PLAIN_BARRIER, p + "    _w = " + one_thread(name, "tl", "counter", "target") + "\n")


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    if LOG:
        LOG.write(s + "\n")
        LOG.flush()


LOG = None


def make_module(text, name, tmp):
    path = os.path.join(tmp, name + ".py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def reference(A, B, steps):
    A, B = A.copy(), B.copy()
    s = (slice(1, -1),) * 3
    for _ in range(steps):
        for src, dst in ((A, B), (B, A)):
            c = src[s]
            dst[s] = (0.125 * (src[2:, 1:-1, 1:-1] - 2.0 * c + src[:-2, 1:-1, 1:-1])
                      + 0.125 * (src[1:-1, 2:, 1:-1] - 2.0 * c + src[1:-1, :-2, 1:-1])
                      + 0.125 * (src[1:-1, 1:-1, 2:] - 2.0 * c + src[1:-1, 1:-1, :-2]) + c)
    return A, B


def main():
    global LOG
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--alt", action="append", default=[], metavar="NAME=PATH",
                    help="another generated module, timed as variant NAME (its text is not "
                    "edited but for --chunks): `flags` was one with neighbour flags instead of "
                    "the grid barrier, `quad` one with its tiles split into quadrants")
    ap.add_argument("--chunks", default="7,10,16,20,26")
    ap.add_argument("--dump", action="store_true", help="write every variant's module to --out")
    ap.add_argument("--plain", action="store_true",
                    help="also time the plain persistent kernel (APPYC_TEMPORAL_3D=0, default "
                    "configuration) under every barrier form")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    LOG = open(os.path.join(a.out, "heat3d_sync_probe.log"), "w")
    import torch
    log("device:", torch.cuda.get_device_name(), "torch", torch.__version__)
    text = open(a.module).read()
    assert text.count(BARRIER) == 1 and text.count(CHUNKS) == 1
    text = text.replace(CHUNKS, 'chunks = int(os.environ.get("PROBE_CHUNKS", "0")) or ' + CHUNKS.split(" = ")[1])
    tmp = tempfile.mkdtemp()
    mods = {}
    texts = {name: text.replace(BARRIER, barrier) for name, barrier in VARIANTS.items()}
    assert text.count(GLUON_ARRIVE + BARRIER) == 1 and text.count(PLAIN_BARRIER) == 1
    for name in ONE_THREAD_FORMS:
        texts[name] = one_thread_variant(text, name)
        assert texts[name] != text
    if a.dump:
        for name, t in texts.items():
            with open(os.path.join(a.out, f"heat3d_{name}.py"), "w") as f:
                f.write(t)
    for alt in a.alt:
        alt_name, alt_path = alt.split("=", 1)
        ftext = open(alt_path).read()
        assert ftext.count(CHUNKS) == 1
        texts[alt_name] = ftext.replace(CHUNKS, 'chunks = int(os.environ.get("PROBE_CHUNKS", "0")) or '
                                       + CHUNKS.split(" = ")[1])
    for name, t in texts.items():
        try:
            mods[name] = make_module(t, "heat3d_" + name, tmp)
        except Exception as e:  # noqa: BLE001
            log(f"{name}: import failed: {type(e).__name__}: {e}")

    x = torch.empty(1 << 27, dtype=torch.float64, device="cuda")
    y = torch.empty_like(x)
    for _ in range(3):
        y.copy_(x)
    torch.cuda.synchronize()
    best = 1e9
    for _ in range(10):
        t0 = time.perf_counter()
        y.copy_(x)
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    copy_bw = 2 * x.numel() * 8 / best
    del x, y
    log(f"copy bandwidth {copy_bw / 1e9:.0f} GB/s")

    rng = np.random.default_rng(7)
    n, steps = 67, 37
    A0, B0 = rng.random((n,) * 3), rng.random((n,) * 3)
    refA, refB = reference(A0, B0, steps)
    refA0, refB0 = A0, B0
    outs = {}
    for name, mod in mods.items():
        mod._APPYC_BLOCKED_3D_MIN_BYTES = 0
        try:
            A = torch.tensor(A0, device="cuda")
            B = torch.tensor(B0, device="cuda")
            mod.heat_3d(steps, A, B)
            torch.cuda.synchronize()
            outs[name] = (A.cpu().numpy(), B.cpu().numpy())
            err = max(np.abs(outs[name][0] - refA).max(), np.abs(outs[name][1] - refB).max())
            log(f"check {name} {n}^3 x {steps}: max abs err vs NumPy {err:.3g}")
        except Exception as e:  # noqa: BLE001
            log(f"check {name}: FAILED {type(e).__name__}: {str(e)[:400]}")
        mod._APPYC_BLOCKED_3D_MIN_BYTES = 8 << 20
    for name in outs:
        if name != "base" and "base" in outs:
            same = all(np.array_equal(p, q) for p, q in zip(outs[name], outs["base"]))
            log(f"check {name} bit-equal to base: {same}")

    n, steps = 120, 500
    bound_ms = steps * 4 * n ** 3 * 8 / copy_bw * 1e3
    log(f"Heat-3D {n}^3 x {steps}: streaming bound {bound_ms:.3f} ms")
    A0, B0 = rng.random((n,) * 3), rng.random((n,) * 3)
    recs = []

    def timed(mod):
        A = torch.tensor(A0, device="cuda")
        B = torch.tensor(B0, device="cuda")
        times = []
        for i in range(9):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            mod.heat_3d(steps, A, B)
            e1.record()
            torch.cuda.synchronize()
            if i >= 2:
                times.append(e0.elapsed_time(e1))
        return float(np.median(times)), min(times)

    cases = [(name, None) for name in mods] + [("base", int(c)) for c in a.chunks.split(",")]
    cases += [(alt.split("=")[0], int(c)) for alt in a.alt for c in a.chunks.split(",")]
    for rnd in range(2):
        for name, chunks in cases:
            if name not in mods:
                continue
            if chunks:
                os.environ["PROBE_CHUNKS"] = str(chunks)
            else:
                os.environ.pop("PROBE_CHUNKS", None)
            try:
                t0 = time.time()
                med, lo = timed(mods[name])
                label = name + (f" chunks={chunks}" if chunks else "")
                log(f"round {rnd} {label}: median {med:.3f} ms, best {lo:.3f} ms, "
                    f"{bound_ms / med:.3f}x bound ({time.time() - t0:.1f} s)")
                recs.append(dict(round=rnd, variant=name, chunks=chunks, median_ms=med,
                                 best_ms=lo, x_bound=bound_ms / med))
            except Exception as e:  # noqa: BLE001
                log(f"round {rnd} {name} chunks={chunks}: FAILED {type(e).__name__}: {str(e)[:300]}")
    os.environ.pop("PROBE_CHUNKS", None)
    if a.plain:
        # The plain persistent kernel (a grid barrier after each of the 1000 phases) at its
        # default configuration, under every barrier form of `_appyc_grid_barrier`.
        os.environ["APPYC_TEMPORAL_3D"] = "0"
        os.environ["APPYC_AUTOTUNE"] = "0"
        for name in ("base", "nobar") + tuple(ONE_THREAD_FORMS):
            if name not in mods:
                continue
            try:
                if name == "nobar":
                    t = texts["base"].replace(PLAIN_BARRIER, '    tl.atomic_add(counter, 1, sem="release")\n')
                    mod = make_module(t, "heat3d_plain_nobar", tmp)
                else:
                    mod = mods[name]
                if name != "nobar":
                    A = torch.tensor(refA0, device="cuda")
                    B = torch.tensor(refB0, device="cuda")
                    mod.heat_3d(37, A, B)
                    same = np.array_equal(A.cpu().numpy(), refA) and np.array_equal(B.cpu().numpy(), refB)
                    log(f"plain {name} {refA.shape[0]}^3 x 37 bit-equal to NumPy: {same}")
                for rnd in range(2):
                    med, lo = timed(mod)
                    log(f"plain round {rnd} {name}: median {med:.3f} ms, best {lo:.3f} ms, {bound_ms / med:.3f}x bound")
                    recs.append(dict(round=rnd, variant=name, plain=True, median_ms=med, best_ms=lo,
                                     x_bound=bound_ms / med))
            except Exception as e:  # noqa: BLE001
                log(f"plain {name}: FAILED {type(e).__name__}: {str(e)[:300]}")
        os.environ.pop("APPYC_TEMPORAL_3D")
        os.environ.pop("APPYC_AUTOTUNE")
    with open(os.path.join(a.out, "heat3d_sync_probe.json"), "w") as f:
        json.dump(dict(copy_gbs=copy_bw / 1e9, bound_ms=bound_ms, records=recs), f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
