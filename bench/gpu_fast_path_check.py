"""Checks the launch fast path (`_appyc_launch`) and replayed launchers (`_appyc_replayed`) on a
GPU. Per NPBench kernel:
- a first call (through Triton: compiling, tuning), then calls until the tuning settles, as
  scripts/bench_npbench.py does;
- a call on the same inputs, in fresh tensors: its launches go through the compiled kernels'
  launchers (counted) or are recorded for replay, and it must give the first call's results;
- a call on other inputs (the same shapes, another seed), in fresh tensors: replayed where the
  module replays (the launcher runs that reach `_appyc_launch` are counted: 0 when all are);
  it must give what the same call gives with every launcher run as written through Triton
  (`_appyc_hooked` forced on), and at the `small` size what the NumPy run of the annotated source
  gives on those inputs.
Each line names the paths taken after settling: fast, replayed, or own (kernels that launch by
their own path, the temporally blocked ones); a call that took none of them fails.

The benchmark checks only first calls, which take neither path.

    python3 bench/gpu_fast_path_check.py --modules gen_npbench [--set ours|natural]
        [--sizes small,paper] [--out DIR]
"""
import argparse
import copy
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np
import torch

# bench_npbench.py and the NPBench sources (npbench/) live in scripts/.
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
sys.path.insert(0, str(SCRIPTS))
from bench_npbench import KERNELS, SEED, SET_DIRS, SET_KERNELS  # noqa: E402

LOG = []


def log(line):
    print(line, flush=True)
    LOG.append(line)


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def outputs(spec, args, ret):
    out = {n: args[n] for n in spec["writes"]}
    rets = ret if isinstance(ret, tuple) else (ret,) if ret is not None else ()
    out.update({f"ret{i}": r for i, r in enumerate(rets)})
    return {k: (v.detach().cpu().numpy() if isinstance(v, torch.Tensor) else np.asarray(v)).copy()
            for k, v in out.items()}


def close(a, b, rtol):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    if np.allclose(a, b, rtol=rtol, atol=1e-8):
        return True
    return np.linalg.norm(a - b) <= rtol * max(np.linalg.norm(b), 1e-30)


def check(kernel, size, modules, source_dir):
    spec = KERNELS[kernel]
    mod = load(Path(modules) / f"{kernel}.py", f"fast_{kernel}_{size}")
    host = spec["make"](np.random.default_rng(SEED), **spec[size])
    other = spec["make"](np.random.default_rng(SEED + 1), **spec[size])
    names = [n for n, _ in host]
    function = getattr(mod, kernel)

    def call(inputs):
        args = {n: torch.from_numpy(v.copy()).cuda() if isinstance(v, np.ndarray) else v
                for n, v in inputs}
        ret = function(*[args[n] for n in names])
        torch.cuda.synchronize()
        return outputs(spec, args, ret)

    def same(a, b, rtol=1e-9):
        return all(close(a[k], b[k], rtol) for k in b)

    first = call(host)
    tables = [t for t in vars(mod).values() if type(t).__name__ == "_AppycTuning"]
    settle = 0
    while any(t.pending for t in tables) and settle < 50:
        call(host)
        settle += 1
    hits = [0]
    for _, table in mod._APPYC_COMPILED.values():
        for key, (run, function_handle, meta, consts) in list(table.items()):
            def counted(*a, run=run):
                hits[0] += 1
                return run(*a)
            table[key] = (counted, function_handle, meta, consts)
    reached = [0]
    real_launch = mod._appyc_launch

    def counting_launch(*a, **k):
        reached[0] += 1
        return real_launch(*a, **k)

    mod._appyc_launch = counting_launch
    second = call(host)  # records what it launches
    recorded = reached[0]
    replayed = call(other)
    ran = reached[0] - recorded
    mod._appyc_hooked = lambda: True  # every launcher as written, every launch through Triton
    plain = call(other)
    replays = sum(1 for n, f in vars(mod).items() if n.startswith("_launch_") and hasattr(f, "__wrapped__"))
    ok_second, ok_other = same(second, first), same(replayed, plain)
    ref_ok = "-"
    if size == "small":
        src = load(source_dir / f"{kernel}.py", f"src_{kernel}")
        np_args = {n: copy.deepcopy(v) for n, v in other}
        np_ret = getattr(src, kernel)(*[np_args[n] for n in names])
        ref = {n: np_args[n] for n in spec["writes"]}
        rets = np_ret if isinstance(np_ret, tuple) else (np_ret,) if np_ret is not None else ()
        ref.update({f"ret{i}": r for i, r in enumerate(rets)})
        ref_ok = all(close(replayed[k], ref[k], 1e-5) for k in ref)
    # Which paths the calls after settling took: the fast path (counted launches), replays (the
    # call on other inputs reached `_appyc_launch` fewer times than the recording call), or
    # neither (kernels launched by their own path, such as the temporally blocked ones: only
    # their results are checked).
    path = "+".join(p for p, took in (("fast", hits[0] > 0), ("replayed", ran < recorded)) if took)
    path = path or ("own" if recorded == 0 else "none")
    ok = ok_second and ok_other and path != "none" and ref_ok in ("-", True)
    log(f"{'ok  ' if ok else 'FAIL'} {kernel:15s} {size:6s} {path:14s} settled after {settle:2d}  fast "
        f"launches {hits[0]:5d}  replayed launchers {replays}, launches through _appyc_launch {recorded:3d} "
        f"recording, {ran:3d} replaying  "
        f"same inputs == first: {ok_second}  other inputs == as written: {ok_other}  "
        f"against NumPy: {ref_ok}")
    return ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--modules", default="gen_npbench")
    p.add_argument("--sizes", default="small,paper")
    p.add_argument("--set", dest="kernel_set", choices=list(SET_DIRS), default="ours")
    p.add_argument("--only", default=None, help="kernels, comma-separated (default: the set's)")
    p.add_argument("--out", default=".")
    a = p.parse_args()
    failed = 0
    for size in a.sizes.split(","):
        modules = Path(a.modules) / ("natural" if a.kernel_set == "natural" else "")
        for kernel in (a.only.split(",") if a.only else SET_KERNELS[a.kernel_set]):
            t0 = time.perf_counter()
            try:
                failed += not check(kernel, size, modules, SET_DIRS[a.kernel_set])
            except Exception as e:  # one kernel's failure must not hide the others
                failed += 1
                log(f"FAIL {kernel} {size}: {type(e).__name__}: {str(e)[:300]}")
            if time.perf_counter() - t0 > 60:
                log(f"     ({kernel} {size} took {time.perf_counter() - t0:.0f} s)")
    log(f"{failed} failed")
    Path(a.out, f"fast_path_check_{a.kernel_set}.log").write_text("\n".join(LOG) + "\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
