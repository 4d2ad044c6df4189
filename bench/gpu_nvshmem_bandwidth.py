#!/usr/bin/env python3
"""Issue 24 part 2: how close the Listing 8 NVSHMEM kernel (samples/nvshmem_jacobi2d_l8.py) comes
to the copy bandwidth at 8192^2 per GPU, and what holds it back. Variants are made by text edits
of generated modules (or by module knobs set before the first launch), each checked against
NumPy before it is timed; time per iteration (two sweeps) from the difference of runs of 20 and
220 iterations, best of --reps, in --rounds rounds over all variants (so drift hits all alike),
and that time as a percentage of a measured device copy (1 GiB, read + written bytes), counting
16 bytes an element a sweep (n x n interior points).

Modules, made on a machine with Rust (the GPU machine has none) into one folder (--modules):
  main_l8.py    golden/nvshmem_jacobi2d_l8.py as main generates it (NVSHMEM's put calls,
                registers capped at 80, `.cg` loads of the put targets, 512 lanes)
  before_l8.py  the same before bounded waits (`git show 72f8f54^:golden/nvshmem_jacobi2d_l8.py`)
  new_l8.py     this branch's module (puts by loads and stores when every PE is reachable: P2P)
  single.py     golden/jacobi_2d.py (appyc's single-GPU persistent kernel, no communication)

Variants (VARIANTS below; `check` False: correctness not checked, said in the output):
  main, main plain, main nocap, before: the kernels as generated, with plain loads, uncapped;
  main nocomm[ nocap][ plain]: puts and waits removed, grid barriers kept (the ceiling of the
    structure; the result is wrong by design, so not checked);
  p2p[ plain][ cap80][ 1024[ w8]]: the new module, puts by loads and stores, no register cap;
  tbs p2p / tbs nvshmem: thread-block specialisation, written here: programs [0, C) only compute
    (boundary row blocks first, each boundary tile counted on a local counter), 2 programs only
    communicate (wait for the counter, put the edge row, signal, wait for the neighbour's);
    one grid barrier a sweep; the puts by loads and stores (uncapped) or by NVSHMEM's calls
    (capped at 80);
  l8 cap74 / cap72, distribute[ local][ cap74][ 6/SM]: the sweeps' load order under a lower
    register cap, and distribute with its rows in block coordinates (dist_local.py, call 7);
  distribute main / generated[ nvshmem puts| nocap| 6/SM| nospec]: samples/distribute_jacobi2d.py's
    modules (dist_main.py before P2P puts, dist_new.py after), the latter with NVSHMEM's puts,
    uncapped, at most 6 programs an SM, or its per-rank block bounds unspecialised: why
    distribute got slower with P2P puts; distribute nocomm: its puts and waits removed (not
    checked), the sweeps alone;
  single (MVL, warps, warps/SM): the single-GPU kernel (1 GPU only; not checked here: its
    difftests and golden run cover it).

Modes:
  --cpu-regs           compile every variant for sm_90 here (no GPU) and print registers and
                       spills (cuobjdump -res-usage): the predictions' input
  --standin            run every checked variant on the CPU stand-in (2 PEs, Triton's
                       interpreter) against NumPy
  --precompile         (GPU machine, no torchrun) fill Triton's cache for every variant and
                       both rank specialisations in parallel processes, so the timed run
                       compiles nothing
  (default)            under torchrun, one process per GPU: check, time, report

    torchrun --standalone --nproc-per-node 2 bench/gpu_nvshmem_bandwidth.py --modules DIR --out $OUT

--only "a;b" runs those variants in that order (the first allocates its arrays first).
"""
import argparse
import importlib.util
import json
import os
import re
import sys
import time
from pathlib import Path

os.environ["NVSHMEM_DISABLE_NVLS"] = "1"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ.setdefault("NVSHMEM_SYMMETRIC_SIZE", "8G")

# APPYC_ROOT: the checkout, when this script runs from a copy outside it.
ROOT = Path(os.environ.get("APPYC_ROOT") or Path(__file__).resolve().parents[1])
sys.path.insert(0, str(ROOT / "tests" / "difftest"))
sys.path.insert(0, str(ROOT / "scripts"))

CG = ', cache_modifier=".cg"'


def no_comm(text):
    """The kernel's puts and waits removed, its grid barriers kept."""
    text, puts = re.subn(r"^(\s+)_appyc_nvshmem_put\(.*$", r"\1pass", text, flags=re.M)
    text, waits = re.subn(r"^(\s+)(\w+) = _appyc_nvshmem_wait\(.*$", r"\1\2 = \2", text, flags=re.M)
    assert puts == 4 and waits == 4, (puts, waits)
    return text


def plain(text):
    """`.cg` loads made plain (a no-op on modules generated since they are plain)."""
    return text.replace(CG, "")


def warps(n):
    def edit(text):
        old = "_appyc_nvshmem_config(512, 4)"
        assert old in text
        return text.replace(old, f"_appyc_nvshmem_config(512, {n})")
    return edit


# Thread-block specialised Listing 8 (see the docstring), appended to new_l8.py; its launcher
# replaces the generated one. Written for this probe only.
TBS = '''

@triton.jit
def _tbs_tile(dst, src, ds0, ds1, ss0, ss1, p0, p1, m):
    tl.store(dst + p0[:, None] * ds0 + p1[None, :] * ds1, 0.2 * (
        tl.load(src + p0[:, None] * ss0 + p1[None, :] * ss1, mask=m)
        + tl.load(src + p0[:, None] * ss0 + (p1[None, :] - 1) * ss1, mask=m)
        + tl.load(src + p0[:, None] * ss0 + (p1[None, :] + 1) * ss1, mask=m)
        + tl.load(src + (p0[:, None] + 1) * ss0 + p1[None, :] * ss1, mask=m)
        + tl.load(src + (p0[:, None] - 1) * ss0 + p1[None, :] * ss1, mask=m)), mask=m)


@triton.jit(do_not_specialize=["_phase_lo", "_phase_hi"])
def _jacobi_2d_tbs(A, flags, B, M, N, up, down, A_stride0, A_stride1, flags_stride0, B_stride0, B_stride1, _done, T,
                   _t_start, _phase_lo, _phase_hi, _sync, MVL: tl.constexpr, GRID_SYNC: tl.constexpr,
                   ROW_BLOCK: tl.constexpr, P2P: tl.constexpr):
    # Phase 0 exchanges A's edge rows; phase p >= 1 computes X from Y (p odd: B from A, p even:
    # A from B) on programs [0, C) and exchanges X's edge rows from programs C (row 1 up) and
    # C + 1 (row M - 2 down) once the compute programs have finished those rows (not after the
    # last sweep); one grid barrier a phase.
    _pid = tl.program_id(0)
    _nprog = tl.num_programs(0)
    _ncomp = _nprog - 2
    _arrived = tl.full((), 0, tl.int64)
    _live = tl.full((), 1, tl.int1)
    _n1 = tl.maximum(tl.cdiv((M - 1) - 1, ROW_BLOCK), 0)
    _n0 = tl.maximum(tl.cdiv((N - 1) - 1, MVL // ROW_BLOCK), 0)
    _phase = _phase_lo
    while _live & (_phase < _phase_hi):
        t = _t_start + tl.maximum(_phase - 1, 0) // 2
        _is_b = (_phase % 2) == 1
        if _pid < _ncomp:
            if _phase > 0:
                for _vp in range(_pid, _n0 * _n1, _ncomp):
                    _cb = _vp % _n0
                    _seq = _vp // _n0
                    # the two boundary row blocks first, so their puts overlap the rest
                    _rb = tl.where(_seq == 0, 0, tl.where(_seq == 1, _n1 - 1, _seq - 1))
                    _p0 = 1 + _rb * ROW_BLOCK + tl.arange(0, ROW_BLOCK)
                    _p1 = 1 + _cb * (MVL // ROW_BLOCK) + tl.arange(0, MVL // ROW_BLOCK)
                    _m = (_p0 < (M - 1))[:, None] & (_p1 < (N - 1))[None, :]
                    if _is_b:
                        _tbs_tile(B, A, B_stride0, B_stride1, A_stride0, A_stride1, _p0, _p1, _m)
                    else:
                        _tbs_tile(A, B, A_stride0, A_stride1, B_stride0, B_stride1, _p0, _p1, _m)
                    if (_rb == 0) | (_rb == _n1 - 1):
                        tl.debug_barrier()
                        if _rb == 0:
                            tl.atomic_add(_done, 1, sem="release")
                        if _rb == _n1 - 1:
                            tl.atomic_add(_done + 8, 1, sem="release")
        else:
            _c = _pid - _ncomp
            if _phase < 2 * T:
                if _phase > 0:
                    _failed = _appyc_nvshmem_until(_done + 8 * _c, _phase * _n0, _sync, False)
                    if _failed:
                        _appyc_nvshmem_give_up(_sync, -1, _phase * _n0, tl.load(_done + 8 * _c, volatile=True), t, 0)
                    _live = _failed == 0
                if _live:
                    _x = 1 - _phase % 2  # 0: A's flags, 1: B's
                    _f = flags + (2 * _x + _c) * flags_stride0
                    if _c == 0:
                        if _is_b:
                            _appyc_nvshmem_put(B + (M - 1) * B_stride0 + B_stride1, B + B_stride0 + B_stride1, 1, N - 2, 0, B_stride1, 0, B_stride1, _f, up, SIGNAL=True, BLOCKING=True, P2P=P2P)
                        else:
                            _appyc_nvshmem_put(A + (M - 1) * A_stride0 + A_stride1, A + A_stride0 + A_stride1, 1, N - 2, 0, A_stride1, 0, A_stride1, _f, up, SIGNAL=True, BLOCKING=True, P2P=P2P)
                    else:
                        if _is_b:
                            _appyc_nvshmem_put(B + B_stride1, B + (M - 2) * B_stride0 + B_stride1, 1, N - 2, 0, B_stride1, 0, B_stride1, _f, down, SIGNAL=True, BLOCKING=True, P2P=P2P)
                        else:
                            _appyc_nvshmem_put(A + A_stride1, A + (M - 2) * A_stride0 + A_stride1, 1, N - 2, 0, A_stride1, 0, A_stride1, _f, down, SIGNAL=True, BLOCKING=True, P2P=P2P)
                    _live = _appyc_nvshmem_wait(_f, _phase // 2 + 1, _sync, t, 2 * _x + _c, 0)
        if GRID_SYNC:
            if _live:
                _arrived += _nprog
                _live = _appyc_nvshmem_barrier(_sync, _arrived, t, 0)
        _phase += 1


def _launch_jacobi_2d_persistent0(A, flags, M, N, up, down, B, T, _appyc_config=None):
    n_t = int(T + 1) - int(1)
    if n_t <= 0:
        return
    _appyc_nvshmem_check_symmetric(A, flags, B)
    _appyc_mvl, _appyc_warps = _appyc_nvshmem_config(512, 4)
    _appyc_row_block = _appyc_rows_a_program(_appyc_mvl, int(N - 1) - int(1))
    done = torch.zeros(16, dtype=torch.int64, device=A.device)
    _appyc_nvshmem_persistent(
        _jacobi_2d_tbs, 2 * n_t + 1, None,
        (A, flags, B, int(M), int(N), int(up), int(down), A.stride(0), A.stride(1), flags.stride(0), B.stride(0),
         B.stride(1), done, n_t, 1),
        _appyc_mvl, _appyc_warps, {"ROW_BLOCK": _appyc_row_block})
'''


def stages(k):
    """The sweeps' tile loops software-pipelined by Triton (`tl.range(..., num_stages=k)`): their
    loads become asynchronous copies into shared memory, issued k - 1 tiles ahead, so the bytes in
    flight no longer wait on registers (performance.md 62)."""
    def edit(text):
        out, count = re.subn(r"for (_vp\w*) in range\((.*)\):", rf"for \1 in tl.range(\2, num_stages={k}):", text)
        assert count, "no sweep loop"
        return out
    return edit


def no_waves(text):
    """The sweeps' loads in one wave (§54's barrier compiled out)."""
    old = "_APPYC_NVSHMEM_LOAD_WAVES = tl.constexpr(True)"
    assert old in text
    return text.replace(old, "_APPYC_NVSHMEM_LOAD_WAVES = tl.constexpr(False)")


def tbs(text):
    return text + TBS


def nospec(text):
    """The distributed kernel's per-rank integers (block bounds, halo rows) unspecialised, so both
    ranks run one compiled kernel, as Listing 8's do since its `up`/`down` were."""
    old = '_appyc_up", "_appyc_down"])\ndef _jacobi_2d_distributed('
    assert old in text
    return text.replace(old, '_appyc_up", "_appyc_down", "_appyc_up_halo", "_appyc_own", "_appyc_r0", '
                             '"_appyc_r1", "_appyc_o"])\ndef _jacobi_2d_distributed(')


def per_sm(k):
    """At most k programs an SM (the launch's occupancy count capped)."""
    def hook(mod):
        count = mod._appyc_programs_per_sm
        mod._appyc_programs_per_sm = lambda *a: min(count(*a), k)
    return hook


# name -> dict(module, edits, env, attrs, hooks, check, worlds, distribute, single).
# new_l8.py is this branch's final module (P2P puts, plain loads, 80 registers); calls 1 and 2
# ran an earlier one (the same P2P puts, but `.cg` loads and no register cap with P2P): their
# rows "p2p" (.cg, uncapped), "p2p plain" (uncapped) and "p2p plain cap80" (= the final
# module) are reproduced by the entries below, except "p2p", which needs the `.cg` loads back.
NOCAP = {"_APPYC_NVSHMEM_MAXNREG": None}
P2P = {"APPYC_NVSHMEM_P2P": "1"}
VARIANTS = {
    "main": dict(module="main_l8.py"),
    "main plain": dict(module="main_l8.py", edits=[plain]),
    "main nocap": dict(module="main_l8.py", attrs=NOCAP),
    "before": dict(module="before_l8.py"),
    "main nocomm": dict(module="main_l8.py", edits=[no_comm], check=False),
    "main nocomm plain": dict(module="main_l8.py", edits=[no_comm, plain], check=False),
    "main nocomm nocap": dict(module="main_l8.py", edits=[no_comm], attrs=NOCAP, check=False),
    "main nocomm nocap plain": dict(module="main_l8.py", edits=[no_comm, plain], attrs=NOCAP, check=False),
    "main nocomm nocap plain 6/SM": dict(module="main_l8.py", edits=[no_comm, plain], attrs=NOCAP,
                                         hooks=[per_sm(6)], check=False),
    "p2p plain": dict(module="new_l8.py", env=P2P, attrs=NOCAP),
    "p2p plain cap80": dict(module="new_l8.py", env=P2P),
    "p2p plain 6/SM": dict(module="new_l8.py", env=P2P, attrs=NOCAP, hooks=[per_sm(6)]),
    "p2p plain 5/SM": dict(module="new_l8.py", env=P2P, attrs=NOCAP, hooks=[per_sm(5)]),
    "p2p plain 8/SM": dict(module="new_l8.py", env=P2P, attrs=NOCAP, hooks=[per_sm(8)]),
    "p2p plain 1024": dict(module="new_l8.py", env=dict(P2P, APPYC_MVL="1024"), attrs=NOCAP),
    "p2p plain 1024 w8": dict(module="new_l8.py", edits=[warps(8)], env=dict(P2P, APPYC_MVL="1024"), attrs=NOCAP),
    "tbs p2p": dict(module="new_l8.py", edits=[tbs], env=P2P, attrs=NOCAP),
    "tbs p2p 6/SM": dict(module="new_l8.py", edits=[tbs], env=P2P, attrs=NOCAP, hooks=[per_sm(6)]),
    "tbs p2p cap80": dict(module="new_l8.py", edits=[tbs], env=P2P),
    "tbs nvshmem cap80": dict(module="new_l8.py", edits=[tbs], env={"APPYC_NVSHMEM_P2P": "0"}),
    # call 3: the final module as generated (P2P decided by the launch), and #pragma distribute
    "generated": dict(module="new_l8.py"),
    "generated nvshmem puts": dict(module="new_l8.py", env={"APPYC_NVSHMEM_P2P": "0"}),
    "distribute main": dict(module="dist_main.py", distribute=True),
    "distribute generated": dict(module="dist_new.py", distribute=True),
    # next: why distribute got slower with P2P puts (943 -> 972 us) while Listing 8 got faster
    "distribute generated nvshmem puts": dict(module="dist_new.py", distribute=True,
                                              env={"APPYC_NVSHMEM_P2P": "0"}),
    "distribute generated nocap": dict(module="dist_new.py", distribute=True, env=P2P, attrs=NOCAP),
    "distribute generated 6/SM": dict(module="dist_new.py", distribute=True, env=P2P,
                                      hooks=[per_sm(6)]),
    # call 4: whether the ranks' different specialisations of the block bounds are the cost
    "distribute generated nospec": dict(module="dist_new.py", distribute=True, edits=[nospec]),
    # whether distribute's gap to Listing 8 is in its communication or in its sweeps
    "distribute nocomm": dict(module="dist_new.py", distribute=True, edits=[no_comm], check=False),
    # call 7: the sweeps' load order (a SASS comparison here, bench/nvshmem_bandwidth.md): with
    # registers to spare ptxas issues 8 loads, an add, then 12 (Listing 8 at cap 80); with fewer
    # all 20 first (distribute at cap 80, Listing 8 at cap 74). dist_local.py: distribute with
    # its rows in block coordinates (no `- _appyc_o` in the addresses), made from dist_new.py.
    "l8 cap74": dict(module="new_l8.py", attrs={"_APPYC_NVSHMEM_MAXNREG": 74}),
    "l8 cap72": dict(module="new_l8.py", attrs={"_APPYC_NVSHMEM_MAXNREG": 72}),
    "distribute local": dict(module="dist_local.py", distribute=True),
    "distribute local cap74": dict(module="dist_local.py", distribute=True,
                                   attrs={"_APPYC_NVSHMEM_MAXNREG": 74}),
    "distribute local cap74 6/SM": dict(module="dist_local.py", distribute=True,
                                        attrs={"_APPYC_NVSHMEM_MAXNREG": 74}, hooks=[per_sm(6)]),
    "distribute cap74": dict(module="dist_new.py", distribute=True, attrs={"_APPYC_NVSHMEM_MAXNREG": 74}),
    # issue 24 on 2 x H200 (performance.md 61): the specialised kernel at the H200's launch
    # configuration (MVL 1024, 128 registers), against main's module, which takes it by default
    "tbs p2p 1024": dict(module="new_l8.py", edits=[tbs], env=dict(P2P, APPYC_MVL="1024"), attrs=NOCAP),
    "tbs p2p 1024 cap128": dict(module="new_l8.py", edits=[tbs], env=dict(P2P, APPYC_MVL="1024"),
                                attrs={"_APPYC_NVSHMEM_MAXNREG": 128}),
    "tbs p2p cap128": dict(module="new_l8.py", edits=[tbs], env=P2P, attrs={"_APPYC_NVSHMEM_MAXNREG": 128}),
    "p2p plain 1024 cap128": dict(module="new_l8.py", env=dict(P2P, APPYC_MVL="1024"),
                                  attrs={"_APPYC_NVSHMEM_MAXNREG": 128}),
    # the sweeps software-pipelined (main's module: MVL 1024 and a cap of 128 on H100 and H200)
    "main stages2": dict(module="main_l8.py", edits=[stages(2)]),
    "main stages3": dict(module="main_l8.py", edits=[stages(3)]),
    "main stages2 nowaves": dict(module="main_l8.py", edits=[stages(2), no_waves]),
    "main stages3 mvl512": dict(module="main_l8.py", edits=[stages(3)], env={"APPYC_MVL": "512"}),
    "single 1024,4,64": dict(module="single.py", single=(1024, 4, 64), check=False, worlds=(1,)),
    "single 512,4,64": dict(module="single.py", single=(512, 4, 64), check=False, worlds=(1,)),
    "single 512,4,24": dict(module="single.py", single=(512, 4, 24), check=False, worlds=(1,)),
    "single 512,4,32": dict(module="single.py", single=(512, 4, 32), check=False, worlds=(1,)),
    "single 1024,4,32": dict(module="single.py", single=(1024, 4, 32), check=False, worlds=(1,)),
}
ENV_KEYS = ("APPYC_NVSHMEM_P2P", "APPYC_MVL")


def variant_text(modules, name):
    v = VARIANTS[name]
    text = (Path(modules) / v["module"]).read_text()
    for edit in v.get("edits", []):
        text = edit(text)
    return text


def load_variant(modules, name, tmp):
    """A fresh copy of the variant's module, knobs set, before any launch."""
    v = VARIANTS[name]
    path = Path(tmp) / (re.sub(r"\W+", "_", name) + ".py")
    path.write_text(variant_text(modules, name))
    spec = importlib.util.spec_from_file_location("bw_" + path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for k, val in v.get("attrs", {}).items():
        assert hasattr(mod, k), (name, k)
        setattr(mod, k, val)
    for hook in v.get("hooks", []):
        hook(mod)
    return mod


def set_env(name):
    for k in ENV_KEYS:
        os.environ.pop(k, None)
    os.environ.update(VARIANTS[name].get("env", {}))


def wanted(args, name, world):
    if args.only and name not in args.only.split(";"):
        return False
    return world in VARIANTS[name].get("worlds", (1, 2, 4, 8))


# ------------------------------------------------------------------------------------------
# --standin: every checked variant on the CPU stand-in

def standin(args):
    from nvshmem_cases import CASES
    from test_nvshmem import run_pes
    import numpy as np
    import tempfile

    case = CASES["jacobi2d_l8"]
    tmp = tempfile.mkdtemp(prefix="bw-standin-")
    ok = True
    for name, v in VARIANTS.items():
        if not v.get("check", True) or v.get("distribute") or (args.only and name not in args.only.split(";")):
            why = ("results wrong by design" if "nocomm" in name else
                   "tests/difftest/test_distribute.py runs it" if v.get("distribute") else "skipped")
            print(f"standin {name}: not checked ({why})")
            continue
        path = Path(tmp) / (re.sub(r"\W+", "_", name) + ".py")
        path.write_text(variant_text(args.modules, name))
        env = dict(v.get("env", {}))
        env.pop("APPYC_MVL", None)  # the interpreter's 128 lanes
        t0 = time.monotonic()
        try:
            per = run_pes(path, case.function, "jacobi2d_l8", 2, timeout=120, env=env)
            err = float(np.abs(case.gather([(p["a0"],) for p in per]) - case.expected(2)).max())
        except Exception as e:  # noqa: BLE001 - reported
            err = f"{type(e).__name__}: {str(e)[-400:]}"
        good = isinstance(err, float) and err < 1e-10
        ok &= good
        print(f"standin {name}: max error {err} ({'ok' if good else 'FAILED'}, {time.monotonic() - t0:.1f} s)",
              flush=True)
    return 0 if ok else 1


# ------------------------------------------------------------------------------------------
# --cpu-regs: registers and spills for sm_90, no GPU

def cpu_regs(args):
    os.environ.pop("TRITON_INTERPRET", None)
    import subprocess
    import tempfile

    import gpu_compile as gc
    import numpy as np
    import torch
    import triton
    from triton.compiler.compiler import ASTSource
    from nvidia import nvshmem as _nv  # noqa: F401

    lib = str(Path(_nv.__path__[0]) / "lib" / "libnvshmem_device.bc")
    tmp = tempfile.mkdtemp(prefix="bw-regs-")
    from nvshmem_cases import Jacobi2D

    found = {}

    def run(self, *a, grid, warmup, **kw):
        bound, spec, options = gc._binder(self)(*a, **kw)
        options, signature, constexprs, attrs = self._pack_args(gc.BACKEND, kw, bound, spec, options)
        k = triton.compile(ASTSource(self, signature, constexprs, attrs), target=gc.TARGET, options=options.__dict__)
        cubin = Path(tmp) / f"{self.fn.__name__}_{len(found)}.cubin"
        cubin.write_bytes(k.asm["cubin"])
        res = subprocess.run([str(Path(triton.__file__).parent / "backends/nvidia/bin/cuobjdump"), "-res-usage",
                              str(cubin)], capture_output=True, text=True).stdout
        m = re.search(r"REG:(\d+) STACK:(\d+)", res)
        found[self.fn.__name__] = (int(m.group(1)), int(m.group(2))) if m else res[-300:]

    gc._jit.JITFunction.run = run
    for name, v in VARIANTS.items():
        if (args.only and name not in args.only.split(";")) or v.get("distribute"):
            continue
        found.clear()
        set_env(name)
        try:
            mod = load_variant(args.modules, name, tmp)
            A, B, M, N, T = Jacobi2D("x", rows=300, cols=1024, T=2).make_args(0, 2)
            A, B = torch.from_numpy(A), torch.from_numpy(B)
            if "single" in v:
                mvl, w, _ = v["single"]
                mod._jacobi_2d_persistent0.warmup(B, A, M, N, *B.stride(), *A.stride(), 0, 4, torch.zeros(1, dtype=torch.int64),
                                                  grid=(1,), MVL=mvl, GRID_SYNC=True, ROW_BLOCK=mvl // 256,
                                                  num_warps=w, launch_cooperative_grid=True)
            else:
                p2p = hasattr(mod, "_appyc_nvshmem_p2p") and os.environ.get("APPYC_NVSHMEM_P2P") == "1"

                def persistent(kernel, phases, work, a, mvl, num_warps, constants=None, sites=None):
                    extra = {"P2P": p2p} if hasattr(mod, "_appyc_nvshmem_p2p") else {}
                    cap = mod._APPYC_NVSHMEM_MAXNREG
                    kernel.warmup(*a, 0, phases, torch.zeros(16, dtype=torch.int64), grid=(1,), MVL=mvl,
                                  GRID_SYNC=True, num_warps=num_warps, launch_cooperative_grid=True, maxnreg=cap,
                                  extern_libs={"libnvshmem_device": lib}, **extra, **(constants or {}))

                mod._appyc_nvshmem_persistent = persistent
                mod._appyc_nvshmem_check_symmetric = lambda *a: None
                mod._appyc_nvshmem_config = lambda m, w: (int(os.environ.get("APPYC_MVL", m)), w)
                mod._launch_jacobi_2d_persistent0(A, torch.zeros(4, dtype=torch.int64), M, N, 1, 1, B, T)
            print(f"regs {name}: {found}", flush=True)
        except Exception as e:  # noqa: BLE001 - reported
            print(f"regs {name}: failed: {type(e).__name__}: {str(e)[:600]}", flush=True)
    return 0


# ------------------------------------------------------------------------------------------
# --precompile: Triton's cache filled in parallel (GPU machine, no torchrun)

def _warm_one(job):
    modules, name, up = job
    import tempfile

    import numpy as np
    import torch
    import torch._C._distributed_c10d as c10d

    c10d._nvshmemx_cumodule_init = lambda module: None
    set_env(name)
    t0 = time.monotonic()
    try:
        mod = load_variant(modules, name, tempfile.mkdtemp(prefix="bw-warm-"))
        dev = torch.device("cuda", 0)
        torch.cuda.set_device(dev)
        from nvshmem_cases import Jacobi2D

        A, B, M, N, T = Jacobi2D("x", rows=300, cols=1024, T=2).make_args(0, 2)
        A, B = torch.from_numpy(A).to(dev), torch.from_numpy(B).to(dev)

        class NoLaunch:
            def __init__(self, k):
                self.k = k

            def warmup(self, *a, **kw):
                return self.k.warmup(*a, **kw)

            def __getitem__(self, grid):
                return lambda *a, **kw: None

        persistent = mod._appyc_nvshmem_persistent
        mod._appyc_nvshmem_persistent = lambda kernel, *a, **kw: persistent(NoLaunch(kernel), *a, **kw)
        mod._appyc_nvshmem_check_symmetric = lambda *a: None
        mod._appyc_nvshmem_my_pe = lambda: 0
        mod._launch_jacobi_2d_persistent0(A, torch.zeros(4, dtype=torch.int64, device=dev), M, N, up, up, B, T)
        return f"{name} up={up}: {time.monotonic() - t0:.1f} s"
    except Exception as e:  # noqa: BLE001 - reported
        return f"{name} up={up}: failed {type(e).__name__}: {str(e)[:300]}"


def precompile(args):
    import multiprocessing as mp

    jobs = [(args.modules, name, up) for name, v in VARIANTS.items() if "single" not in v and "distribute" not in v
            and (not args.only or name in args.only.split(";")) for up in (0, 1)]
    t0 = time.monotonic()
    with mp.get_context("spawn").Pool(min(len(jobs), args.jobs)) as pool:
        for line in pool.imap_unordered(_warm_one, jobs):
            print(f"[{time.monotonic() - t0:6.1f}s] precompiled {line}", flush=True)
    return 0


# ------------------------------------------------------------------------------------------
# the GPU run (torchrun)

def gpu(args):
    import tempfile

    import numpy as np
    import torch
    import torch.distributed as dist

    from gpu_nvshmem import microseconds_per_iteration as per_iteration_us
    from nvshmem_cases import Jacobi2D

    import torch._C._distributed_c10d as c10d

    init = c10d._nvshmemx_cumodule_init

    def tolerant_init(module):
        # A nocomm variant's module references no NVSHMEM symbol, so it has no device state to
        # initialise (the init fails with 'named symbol not found'); every other module must.
        try:
            init(module)
        except RuntimeError as e:
            if "Error code: 7" not in str(e):
                raise

    c10d._nvshmemx_cumodule_init = tolerant_init
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    # A variant that deadlocks fails within this bound instead of eating the call's time.
    os.environ.setdefault("APPYC_NVSHMEM_TIMEOUT", "20")
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    logf = open(out / f"bandwidth_w{world}.log", "a") if rank == 0 else None

    def log(*a):
        if rank == 0:
            line = " ".join(str(x) for x in (f"[{time.monotonic() - started:6.1f}s]", *a))
            print(line, flush=True)
            logf.write(line + "\n")
            logf.flush()

    # The copy ceiling, every GPU copying at once, as they stream during the stencil.
    n_copy = 1 << 27
    x = torch.randn(n_copy, dtype=torch.float64, device=device)
    y = torch.empty_like(x)
    for _ in range(3):
        y.copy_(x)
    dist.barrier()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(20):
        y.copy_(x)
    e1.record()
    torch.cuda.synchronize()
    copy_gbs = 2 * 8 * n_copy * 20 / (e0.elapsed_time(e1) * 1e-3) / 1e9
    del x, y
    torch.cuda.empty_cache()
    result = {"device": f"{torch.cuda.get_device_name(device)} x {world}", "torch": torch.__version__,
              "copy_GBps": copy_gbs, "n": args.n, "variants": {}}
    import triton
    result["triton"] = triton.__version__
    log("device", result["device"], f"copy {copy_gbs:.0f} GB/s (1 GiB, read + write)")

    n = args.n
    ideal_bytes = 2 * 16 * n * n
    tmp = tempfile.mkdtemp(prefix="bw-")
    # In --only's order when given: which variant allocates first may matter (call 6).
    order = args.only.split(";") if args.only else list(VARIANTS)
    names = [nm for nm in order if nm in VARIANTS and wanted(args, nm, world)]
    mods, runs = {}, {}
    heap = None
    up = down = None
    def spent():
        """Whether the run's budget is spent, by rank 0's clock (every rank must agree)."""
        flag = torch.tensor([float(time.monotonic() - started > args.budget)], device=device)
        dist.broadcast(flag, 0)
        return bool(flag.item())

    for name in names:
        if spent():
            log(f"{name}: skipped (the run's budget of {args.budget:g} s is spent)")
            continue
        v = VARIANTS[name]
        set_env(name)
        row = result["variants"].setdefault(name, {})
        s = time.monotonic()
        try:
            mod = mods[name] = load_variant(args.modules, name, tmp)
            if v.get("distribute"):
                # samples/distribute_jacobi2d.py: every rank passes the global arrays (n * W x n,
                # n rows each); the blocks' cut and gather cancel in the two runs' difference.
                sys.path.insert(0, str(ROOT / "samples"))
                import distribute_jacobi2d as source

                if v.get("check", True):
                    G = np.random.default_rng(53).standard_normal((601, 1024))
                    A, B = torch.from_numpy(G).to(device), torch.from_numpy(G + 0.5).to(device)
                    mod.jacobi_2d(A, B, 601, 1024, 7)
                    RA, RB = G.copy(), G + 0.5
                    source.jacobi_2d(RA, RB, 601, 1024, 7)
                    err = max(float(np.abs(A.cpu().numpy() - RA).max()), float(np.abs(B.cpu().numpy() - RB).max()))
                    row["check"] = err
                    if not err < 1e-10:
                        raise AssertionError(f"wrong result: max error {err}")
                else:
                    row["check"] = "not checked (puts and waits removed: wrong by design)"
                G = torch.from_numpy(np.random.default_rng(rank).standard_normal((n * world, n))).to(device)
                A, B = G.clone(), G.clone()
                del G
                runs[name] = (lambda t, mod=mod, A=A, B=B: mod.jacobi_2d(A, B, n * world, n, t))
            elif "single" in v:
                A = torch.from_numpy(np.random.default_rng(rank).standard_normal((n + 2, n))).to(device)
                B = A.clone()
                cfg = v["single"]
                runs[name] = (lambda t, mod=mod, A=A, B=B: mod._launch_jacobi_2d_persistent0(B, A, n + 2, n, t, cfg))
                row["check"] = "not checked (single-GPU kernel: difftests and goldens cover it)"
            else:
                if v.get("check", True):
                    case = Jacobi2D("x", rows=300, cols=1024, T=7)
                    a = [mod._appyc_nvshmem_symmetric(torch.from_numpy(z).to(device)) if isinstance(z, np.ndarray)
                         else z for z in case.make_args(rank, world)]
                    mod.jacobi_2d(*a)
                    torch.cuda.synchronize()
                    parts = [torch.empty_like(a[0][1:-1]) for _ in range(world)]
                    dist.all_gather(parts, a[0][1:-1].contiguous())
                    err = float(np.abs(torch.cat(parts).cpu().numpy() - case.expected(world)).max())
                    row["check"] = err
                    if not err < 1e-10:
                        raise AssertionError(f"wrong result: max error {err}")
                else:
                    row["check"] = "not checked (puts and waits removed: wrong by design)"
                if heap is None:
                    A0 = np.random.default_rng(rank).standard_normal((n + 2, n))
                    A = mod._appyc_nvshmem_symmetric(torch.from_numpy(A0).to(device))
                    B = mod._appyc_nvshmem_symmetric(torch.from_numpy(A0 + 0.5).to(device))
                    heap = (A, B, list(mod._APPYC_NVSHMEM_STATE["heap"]))
                else:
                    mod._appyc_nvshmem_setup()
                    mod._APPYC_NVSHMEM_STATE["heap"].extend(heap[2])
                A, B = heap[0], heap[1]
                runs[name] = (lambda t, mod=mod, A=A, B=B: mod.jacobi_2d(A, B, n + 2, n, t))
            us = per_iteration_us(runs[name], 20, 220, args.reps)
            row.setdefault("us", []).append(us)
            stats = getattr(mod, "_APPYC_NVSHMEM_STATE", {}).get("programs", {}).values()
            row["regs, spills, programs"] = [(c.n_regs, c.n_spills, p) for c, p in stats]
            if "single" in v:
                for c in mod._jacobi_2d_persistent0.device_caches[device.index][0].values():
                    row.setdefault("regs, spills, warps", []).append((c.n_regs, c.n_spills, c.metadata.num_warps))
            log(f"{name}: {us:.1f} us/iteration, {100 * ideal_bytes / (us * 1e-6) / 1e9 / copy_gbs:.1f} % of copy, "
                f"check {row['check']}, {row.get('regs, spills, programs') or row.get('regs, spills, warps')} "
                f"({time.monotonic() - s:.1f} s)")
        except Exception as e:  # noqa: BLE001 - recorded
            row["failed"] = f"{type(e).__name__}: {e}"[:400]
            log(f"{name}: FAILED {row['failed']}")
            runs.pop(name, None)
        dist.barrier()
    for r in range(1, args.rounds):
        for name, run in runs.items():
            if spent():
                break
            set_env(name)
            us = per_iteration_us(run, 20, 220, args.reps)
            result["variants"][name]["us"].append(us)
            log(f"round {r + 1}: {name}: {us:.1f} us/iteration")
    # The table: best of the rounds.
    log(f"| variant | GPUs | us/iteration (best; all) | % of copy ({copy_gbs:.0f} GB/s) | check | regs, spills, programs |")
    for name, row in result["variants"].items():
        if "us" not in row:
            log(f"| {name} | {world} | {row.get('failed', 'skipped')} | | | |")
            continue
        best = min(row["us"])
        row["best_us"] = best
        row["percent_of_copy"] = 100 * ideal_bytes / (best * 1e-6) / 1e9 / copy_gbs
        log(f"| {name} | {world} | {best:.1f} ({', '.join(f'{u:.1f}' for u in row['us'])}) | "
            f"{row['percent_of_copy']:.1f} | {row['check']} | "
            f"{row.get('regs, spills, programs') or row.get('regs, spills, warps')} |")
    dist.barrier()
    if rank == 0:
        (out / f"bandwidth_w{world}.json").write_text(json.dumps(result, indent=1))
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modules", default=".devcarry/bw", help="folder with main_l8.py, before_l8.py, new_l8.py, single.py")
    ap.add_argument("--out", default=os.environ.get("OUT", "bw_out"))
    ap.add_argument("--only", default="", help="variant names separated by ';'")
    ap.add_argument("--n", type=int, default=8192, help="per-GPU interior n (n x n)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--budget", type=float, default=150.0, help="seconds after which no new variant starts")
    ap.add_argument("--jobs", type=int, default=16, help="--precompile's processes")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--cpu-regs", action="store_true")
    mode.add_argument("--standin", action="store_true")
    mode.add_argument("--precompile", action="store_true")
    a = ap.parse_args()
    sys.exit(cpu_regs(a) if a.cpu_regs else standin(a) if a.standin else precompile(a) if a.precompile else gpu(a))
