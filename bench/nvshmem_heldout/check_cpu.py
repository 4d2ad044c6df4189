"""CPU check of the held-out row program (heat_rows.py) without a GPU.

Runs the compiled module (heat_rows_gen.py) under Triton's interpreter on the repository's CPU
stand-in for NVSHMEM (tests/difftest/nvshmem_standin.py: one process per PE, symmetric heaps in
shared files) for 1, 2 and 3 PEs at small odd sizes, and compares the gathered slabs with the
global single-array NumPy run (heat_rows_case.heat_global) and with the unchanged source run by
the reference module (appyc_aot.nvshmem.run), which also checks every put's signal.

    TRITON_INTERPRET=1 python bench/nvshmem_heldout/check_cpu.py [--pes 1,2,3] [--module GEN.py]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "difftest"))
sys.path.insert(0, str(HERE))
sys.path.append(str(ROOT / "python"))

import numpy as np  # noqa: E402

from heat_rows_case import HeatRows  # noqa: E402

# (rows per PE, columns, steps, c): odd sizes; 1 row per PE makes a PE's first row its last.
SIZES = [(7, 13, 3, 0.15), (5, 9, 2, 0.2), (1, 11, 2, 0.1)]
TIMEOUT = 180.0
MODULE = HERE / "heat_rows_gen.py"


def worker(module, directory, pe, n_pes, size):
    import torch
    from triton.runtime import interpreter as interp
    from nvshmem_standin import Runtime

    # As nvshmem_standin.main: the interpreter's copy-back would rewrite bytes a peer put.
    interp.GridExecutor._restore_args_dev = lambda self, *a, **k: None
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"heat_rows_gen_{pe}", module)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rt = Runtime(directory, pe, n_pes, TIMEOUT)
    mod._appyc_nvshmem_use(rt)
    case = HeatRows(*size)
    args = [rt.symmetric(torch.from_numpy(a.copy())) if isinstance(a, np.ndarray) else a
            for a in case.make_args(pe, n_pes)]
    mod.heat_rows(*args)
    np.save(Path(directory) / f"out{pe}.npy", args[0].numpy().copy())


def check(module, n_pes, size):
    from nvshmem_standin import create_heaps
    from appyc_aot import nvshmem
    import heat_rows

    case = HeatRows(*size)
    with tempfile.TemporaryDirectory(prefix="heldout-") as d:
        create_heaps(d, n_pes)
        env = dict(os.environ, TRITON_INTERPRET="1", APPYC_NVSHMEM_TIMEOUT=str(TIMEOUT))
        procs = [subprocess.Popen([sys.executable, __file__, "--module", str(module), "--worker", d, str(pe), str(n_pes),
                                   ",".join(map(str, size))], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for pe in range(n_pes)]
        outs = [p.communicate(timeout=2 * TIMEOUT + 60)[0].decode(errors="replace") for p in procs]
        for pe, (p, out) in enumerate(zip(procs, outs)):
            if p.returncode != 0:
                raise SystemExit(f"PE {pe} of {n_pes} failed:\n{out[-3000:]}")
        got = case.gather([(np.load(Path(d) / f"out{pe}.npy"),) for pe in range(n_pes)])
    ref = case.gather(nvshmem.run(heat_rows.heat_rows, n_pes, case.make_args, timeout=30))
    want = case.expected(n_pes)
    return float(np.abs(got - want).max()), float(np.abs(ref - want).max())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pes", default="1,2,3")
    ap.add_argument("--module", default=str(MODULE), help="the compiled module (default heat_rows_gen.py)")
    ap.add_argument("--worker", nargs=4, metavar=("DIR", "PE", "N_PES", "SIZE"))
    a = ap.parse_args()
    if a.worker:
        d, pe, n, size = a.worker
        r, c, s, k = size.split(",")
        worker(a.module, d, int(pe), int(n), (int(r), int(c), int(s), float(k)))
        return
    worst = 0.0
    for n_pes in [int(p) for p in a.pes.split(",")]:
        for size in SIZES:
            t = time.monotonic()
            err, ref_err = check(a.module, n_pes, size)
            worst = max(worst, err, ref_err)
            print(f"{n_pes} PE(s), {size[0]} rows/PE x {size[1]} cols, {size[2]} steps, c = {size[3]}: "
                  f"compiled vs global NumPy {err:.3g}, reference module vs global NumPy {ref_err:.3g} "
                  f"({time.monotonic() - t:.1f} s)", flush=True)
    print("max abs error", worst, "OK" if worst < 1e-12 else "FAILED")
    sys.exit(0 if worst < 1e-12 else 1)


if __name__ == "__main__":
    main()
