#!/usr/bin/env python3
"""What the convergence test costs a 2-D Jacobi sweep in appyc's persistent kernel, and which
way of reducing it is cheapest: textual variants of the generated module of bench/sources/
jacobi2d_clause.py (one program a row, MVL-wide strips along it), each checked against NumPy
and timed alternating in one process (bench/gpu_tolerance_loops.py's jacobi_2d case).

- as generated: `_diff_part` a scalar, each strip reduced across its lanes (`tl.max`) into it;
- lanes: `_diff_part` a vector of MVL lanes, maxed element-wise each strip, reduced once a row;
- lanes, no reload: the same, and the difference taken from the value just stored and the
  A[i, j] the sweep loaded (the kernel reloads both: Triton cannot tell B from A);
- no test: the sweep alone, stopping by the count (what the test costs at all).

A module with store forwarding (its kernel keeps the stored `B[i, j]` in a register) gets
its own variants: as generated; `A[i, j]` loaded once for the sweep and the test (what a check
at the launch that A and B do not overlap would allow); that and the lanes accumulator; no test.

    python bench/gpu_jacobi2d_variants.py --module .devcarry/tol_new/jacobi2d_clause.py --out OUT [--cpu]
"""
import argparse
import importlib.util
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_tolerance_loops as tl_loops  # noqa: E402

STORE = re.compile(r"^(\s*)tl\.store\((_B_now \+ i \* _B_now_stride0 \+ j \* _B_now_stride1), (0\.2 \* .*), mask=j_mask\)(  #.*)$", re.M)
UPDATE = re.compile(r"^(\s*)_diff_part = tl\.maximum\(_diff_part, _appyc_masked_max\((tl\.abs\(.*\)), j_mask\)\)(  #.*)$", re.M)
INIT = "_diff_part = _appyc_lowest_like(tl.zeros((), "
ATOMIC = re.compile(r"tl\.atomic_max\((_diff_shared_now \+ 0 \* _diff_shared_now_stride0), _diff_part\)")
A_IJ = "tl.load(_A_now + i * _A_now_stride0 + j * _A_now_stride1, mask=j_mask)"


FWD_STORE = re.compile(r"^(\s*)_B_stored = (.*)$", re.M)
FWD_UPDATE = re.compile(r"^(\s*)_diff_part = tl\.maximum\(_diff_part, _appyc_masked_max\((tl\.abs\(_B_stored - .*\)), j_mask\)\)(  #.*)$", re.M)


def forwarded_variants(text):
    """The same questions for a module whose kernel reads the stored `B[i, j]` back from a
    register (passes/forward_stores.rs): what the reload of `A[i, j]` still costs."""
    assert FWD_STORE.search(text) and FWD_UPDATE.search(text) and INIT in text and ATOMIC.search(text), "unexpected module"
    reuse = FWD_STORE.sub(lambda m: f"{m[1]}_a_ij = {A_IJ}\n{m[1]}_B_stored = {m[2].replace(A_IJ, '_a_ij', 1)}", text)
    reuse = FWD_UPDATE.sub(lambda m: m[0].replace(A_IJ, "_a_ij"), reuse)
    lanes = reuse.replace(INIT, "_diff_part = _appyc_lowest_like(tl.zeros((MVL,), ")
    lanes = FWD_UPDATE.sub(lambda m: f'{m[1]}_diff_part = tl.maximum(_diff_part, tl.where(j_mask, {m[2]}, float("-inf"))){m[3]}', lanes)
    lanes = ATOMIC.sub(lambda m: f"tl.atomic_max({m[1]}, tl.max(_diff_part, axis=0))", lanes)
    no_test = FWD_UPDATE.sub("", text)
    no_test = ATOMIC.sub("pass", no_test)
    no_test = no_test.replace("_running = _running & (((diff > tol)) & (((it).to(tl.float64) < max_iter)))",
                              "_running = _running & (((it).to(tl.float64) < max_iter))")
    return {"as generated": text, "A reused": reuse, "A reused, lanes": lanes, "no test": no_test}


def variants(text):
    if "_B_stored" in text:
        return forwarded_variants(text)
    assert STORE.search(text) and UPDATE.search(text) and INIT in text and ATOMIC.search(text), "unexpected module"
    lanes = text.replace(INIT, "_diff_part = _appyc_lowest_like(tl.zeros((MVL,), ")
    lanes = UPDATE.sub(lambda m: f'{m[1]}_diff_part = tl.maximum(_diff_part, tl.where(j_mask, {m[2]}, float("-inf"))){m[3]}', lanes)
    lanes = ATOMIC.sub(lambda m: f"tl.atomic_max({m[1]}, tl.max(_diff_part, axis=0))", lanes)

    def once(m):
        value = m[3].replace(A_IJ, "_a_ij", 1)
        return f"{m[1]}_a_ij = {A_IJ}\n{m[1]}_b_ij = {value}\n{m[1]}tl.store({m[2]}, _b_ij, mask=j_mask){m[4]}"
    no_reload = STORE.sub(once, lanes)
    no_reload = UPDATE.sub(lambda m: m[0], no_reload)
    no_reload = re.sub(r'tl\.where\(j_mask, tl\.abs\(.*\), float\("-inf"\)\)',
                       'tl.where(j_mask, tl.abs(_b_ij - _a_ij), float("-inf"))', no_reload)
    no_test = UPDATE.sub("", text)
    no_test = ATOMIC.sub("pass", no_test)
    no_test = no_test.replace("_running = _running & (((diff > tol)) & (((it).to(tl.float64) < max_iter)))",
                              "_running = _running & (((it).to(tl.float64) < max_iter))")
    return {"as generated": text, "lanes": lanes, "lanes, no reload": no_reload, "no test": no_test}


def main(a):
    import numpy as np
    import torch
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "jacobi2d_variants.log", "a")

    def say(text):
        print(text, flush=True)
        log.write(text + "\n")
        log.flush()

    dev_name = "cuda" if not a.cpu else "cpu"
    texts = variants(Path(a.module).read_text())
    tmp = Path(tempfile.mkdtemp(prefix="j2v_"))
    mods = {}
    for i, (name, text) in enumerate(texts.items()):
        (tmp / f"v{i}.py").write_text(text)
        (out / f"variant{i}.py").write_text(text)
        spec = importlib.util.spec_from_file_location(f"v{i}", tmp / f"v{i}.py")
        mods[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mods[name])
    A0, B0, tol, max_iter, (ref_A, ref_B, ref_it), what = tl_loops.case_inputs(np, "jacobi_2d", a)
    say(f"device {torch.cuda.get_device_name() if not a.cpu else 'cpu'}; A {A0.shape}; reference ({what}) {ref_it} sweeps")
    dev = {"A": torch.from_numpy(A0).to(dev_name), "B": torch.from_numpy(B0).to(dev_name)}
    pristine = {k: v.clone() for k, v in dev.items()}

    def restore():
        for k in dev:
            dev[k].copy_(pristine[k])

    def sync():
        if not a.cpu:
            torch.cuda.synchronize()

    calls = {name: (lambda m=m, n=name: m.jacobi2d_clause(dev["A"], dev["B"], tol, ref_it if n == "no test" else max_iter))
             for name, m in mods.items()}
    caches = {k: tempfile.mkdtemp(prefix="appyc_") for k in calls}
    results = {"shape": list(A0.shape), "sweeps": ref_it, "variants": {}}
    for name, fn in calls.items():
        os.environ["APPYC_CACHE_DIR"] = caches[name]
        restore()
        sync()
        t = time.perf_counter()
        it = int(fn())
        sync()
        first = time.perf_counter() - t
        ok = bool(it == ref_it and np.allclose(dev["A"].cpu().numpy(), ref_A, rtol=1e-12, atol=1e-12)
                  and np.allclose(dev["B"].cpu().numpy(), ref_B, rtol=1e-12, atol=1e-12))
        results["variants"][name] = {"first_s": first, "ok": ok, "sweeps": it}
        say(f"{name}: first call {first:.2f} s, {it} sweeps, {'correct' if ok else 'WRONG'}")
    times = {k: [] for k in calls}
    for r in range(a.rounds):
        for name in (list(calls) if r % 2 == 0 else list(calls)[::-1]):
            os.environ["APPYC_CACHE_DIR"] = caches[name]
            for _ in range(a.reps):
                restore()
                sync()
                t = time.perf_counter()
                calls[name]()
                sync()
                times[name].append((time.perf_counter() - t) * 1e3)
    gb = 2 * A0.size * 8 * ref_it / 1e9  # a sweep reads A and writes B once
    for name, ts in times.items():
        ms = statistics.median(ts)
        results["variants"][name].update(ms=ms, calls=len(ts), gbps=gb / ms * 1e3)
        say(f"{name:18s} {ms:9.3f} ms ({len(ts)} calls), {gb / ms * 1e3:6.0f} GB/s at one read and one write a sweep")
    (out / "jacobi2d_variants.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--module", required=True)
    p.add_argument("--n2d", type=int, default=2000)
    p.add_argument("--sweeps2d", type=int, default=500)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--cpu", action="store_true", help="CPU tensors under TRITON_INTERPRET=1 (a smoke test)")
    p.add_argument("--out", default="jacobi2d_variants_out")
    main(p.parse_args())
