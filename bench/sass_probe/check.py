"""Runs an edited distribute module on the CPU stand-in (2-4 PEs) against NumPy. Usage: check.py MODULE"""
import sys
from pathlib import Path
import numpy as np
import pathlib; _R = pathlib.Path(__file__).resolve().parents[2]; sys.path.insert(0, str(_R / "tests/difftest")); sys.path.insert(0, str(_R / "samples"))
from nvshmem_cases import DIST_CASES
from test_nvshmem import run_pes
mod = Path(sys.argv[1])
for name in ("distribute_jacobi2d", "distribute_jacobi2d_tall", "distribute_jacobi2d_twice"):
    case = DIST_CASES[name]
    for n in (2, 3, 4):
        per = run_pes(mod, case.function, name, n, timeout=120)
        exp = case.expected()
        ok = all(np.array_equal(a[f"a{i}"], w) for a in per for i, w in enumerate(exp))
        print(name, n, "ok" if ok else "MISMATCH", flush=True)
