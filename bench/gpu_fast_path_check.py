"""Checks the launch fast path (`_appyc_launch`) on a GPU: every NPBench kernel is called twice
on the same inputs; the first call goes through Triton (compiling, tuning), the second must go
through the compiled kernels' launchers (counted) and give the first call's results. At the
`small` size both are also checked against the NumPy run of the annotated source.

The benchmark checks only first calls, which never take the fast path.

    python3 bench/gpu_fast_path_check.py --modules gen_npbench [--sizes small,paper] [--out DIR]
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
from bench_npbench import KERNELS, make_inputs  # noqa: E402

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


def check(kernel, size, modules):
    spec = KERNELS[kernel]
    mod = load(Path(modules) / f"{kernel}.py", f"fast_{kernel}_{size}")
    host = make_inputs(kernel, size)
    names = [n for n, _ in host]

    def device_args():
        return {n: torch.from_numpy(v.copy()).cuda() if isinstance(v, np.ndarray) else v
                for n, v in host}

    args = device_args()
    ret = getattr(mod, kernel)(*[args[n] for n in names])
    torch.cuda.synchronize()
    first = outputs(spec, args, ret)
    hits = [0]
    for _, table in mod._APPYC_COMPILED.values():
        for key, (run, function, meta, consts) in list(table.items()):
            def counted(*a, run=run):
                hits[0] += 1
                return run(*a)
            table[key] = (counted, function, meta, consts)
    args = device_args()
    ret = getattr(mod, kernel)(*[args[n] for n in names])
    torch.cuda.synchronize()
    second = outputs(spec, args, ret)
    same = all(close(second[k], first[k], 1e-9) for k in first)
    ref_ok = "-"
    if size == "small":
        src = load(SCRIPTS / "npbench" / f"{kernel}.py", f"src_{kernel}")
        np_args = {n: copy.deepcopy(v) for n, v in host}
        np_ret = getattr(src, kernel)(*[np_args[n] for n in names])
        ref = {n: np_args[n] for n in spec["writes"]}
        rets = np_ret if isinstance(np_ret, tuple) else (np_ret,) if np_ret is not None else ()
        ref.update({f"ret{i}": r for i, r in enumerate(rets)})
        ref_ok = all(close(second[k], ref[k], 1e-5) for k in ref)
    ok = same and hits[0] > 0 and ref_ok in ("-", True)
    log(f"{'ok  ' if ok else 'FAIL'} {kernel:15s} {size:6s} fast launches {hits[0]:5d}  "
        f"second call == first: {same}  against NumPy: {ref_ok}")
    return ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--modules", default="gen_npbench")
    p.add_argument("--sizes", default="small,paper")
    p.add_argument("--only", default=",".join(KERNELS))
    p.add_argument("--out", default=".")
    a = p.parse_args()
    failed = 0
    for size in a.sizes.split(","):
        for kernel in a.only.split(","):
            t0 = time.perf_counter()
            try:
                failed += not check(kernel, size, a.modules)
            except Exception as e:  # one kernel's failure must not hide the others
                failed += 1
                log(f"FAIL {kernel} {size}: {type(e).__name__}: {str(e)[:300]}")
            if time.perf_counter() - t0 > 60:
                log(f"     ({kernel} {size} took {time.perf_counter() - t0:.0f} s)")
    log(f"{failed} failed")
    Path(a.out, "fast_path_check.log").write_text("\n".join(LOG) + "\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
