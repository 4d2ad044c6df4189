"""Checks the temporally blocked jacobi_1d (codegen/blocked.rs) on a GPU against NumPy: sizes
around a chunk's edge, step counts around a group's, and a size whose programs do not fit on
the GPU at once (the launcher must fall back to the plain persistent kernel). Each case says
which path ran.

    python3 bench/gpu_blocked_check.py --modules gen_npbench [--out DIR]
"""
import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np
import torch

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"  # the NPBench sources: npbench/


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--modules", default="gen_npbench")
    p.add_argument("--out", default=".")
    a = p.parse_args()
    mod = load(Path(a.modules) / "jacobi_1d.py", "blocked_jacobi_1d")
    src = load(SCRIPTS / "npbench" / "jacobi_1d.py", "src_jacobi_1d")
    taken = []
    blocked = mod._appyc_blocked

    def recording(*args):
        ran = blocked(*args)
        taken.append(ran)
        return ran

    mod._appyc_blocked = recording
    lines, failed = [], 0
    for n, steps in [(3, 5), (25, 1), (385, 31), (386, 32), (387, 33), (1000, 64), (32000, 100),
                     (32001, 97), (4_000_000, 3)]:
        rng = np.random.default_rng(n + steps)
        A, B = rng.random(n), rng.random(n)
        a_ref, b_ref = A.copy(), B.copy()
        src.jacobi_1d(steps, a_ref, b_ref)
        tA, tB = torch.from_numpy(A).cuda(), torch.from_numpy(B).cuda()
        taken.clear()
        mod.jacobi_1d(steps, tA, tB)
        torch.cuda.synchronize()
        err = max(np.abs(tA.cpu().numpy() - a_ref).max(), np.abs(tB.cpu().numpy() - b_ref).max())
        path = "blocked" if taken and taken[0] else "plain persistent"
        ok = err < 1e-12
        failed += not ok
        lines.append(f"{'ok  ' if ok else 'FAIL'} N={n:8d} steps={steps:4d} {path:16s} max err {err:.1e}")
        print(lines[-1], flush=True)
    lines.append(f"{failed} failed")
    print(lines[-1])
    Path(a.out, "blocked_check.log").write_text("\n".join(lines) + "\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
