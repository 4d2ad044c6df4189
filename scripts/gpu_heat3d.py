#!/usr/bin/env python3
"""heat_3d (NPBench `paper`: N = 120, TSTEPS = 500, fp64) on the GPU: the persistent kernel's
launch configurations and the shape of each virtual program's work, against the device's copy
bandwidth. For the "Fast by default" issue's bandwidth target; a measurement, not a test.

    python3 scripts/gpu_heat3d.py --generate gen_heat      # here: compile the variants
    python3 scripts/gpu_heat3d.py --modules gen_heat --out DIR   # on the GPU

Variants: `row` is scripts/npbench/heat_3d.py as written (grid over i and j, one 118-element
row of k per virtual program); `tileR` replaces `1:M-1=>parallel` by `1:M-1=>simd(R)` (grid
over i, tiles of R x 128). Each runs at several (MVL, num_warps) with one cooperative launch.
"""
import argparse
import importlib.util
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "scripts/npbench/heat_3d.py"
TILES = (2, 4, 8)
N, STEPS = 120, 500


def generate(dest: Path, appyc: str):
    dest.mkdir(parents=True, exist_ok=True)
    src = SOURCE.read_text()
    variants = {"row": src}
    for r in TILES:
        variants[f"tile{r}"] = src.replace("1:M-1=>parallel 1:N-1=>simd",
                                           f"1:M-1=>simd({r}) 1:N-1=>simd(128)")
    for name, text in variants.items():
        tmp = dest / f"{name}_src.py"
        tmp.write_text(text)
        subprocess.run([appyc, str(tmp), "-o", str(dest / f"{name}.py")], check=True)
        print("ok", name)


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def reference(A, B, steps):
    for _ in range(steps):
        B[1:-1, 1:-1, 1:-1] = (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
                               + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
                               + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, :-2])
                               + A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1, 1:-1] = (0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1])
                               + 0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1])
                               + 0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, :-2])
                               + B[1:-1, 1:-1, 1:-1])


def cuda_ms(torch, fn, reps):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(1000 * (time.perf_counter() - start))
    return sorted(times)[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--generate")
    ap.add_argument("--appyc", default=str(REPO / "target/release/appyc"))
    ap.add_argument("--modules")
    ap.add_argument("--out", default=".")
    ap.add_argument("--steps", type=int, default=STEPS)
    a = ap.parse_args()
    if a.generate:
        generate(Path(a.generate), a.appyc)
        return
    import numpy as np
    import torch

    out = Path(a.out)
    rng = np.random.default_rng(5)
    base = [rng.standard_normal((N, N, N)) for _ in range(2)]
    want = [b.copy() for b in base]
    reference(want[0], want[1], a.steps)
    dev = [torch.from_numpy(b).cuda() for b in base]
    # Copy bandwidth: one read and one write of an N^3 fp64 array.
    x = dev[0].clone()
    y = torch.empty_like(x)
    copy_ms = cuda_ms(torch, lambda: y.copy_(x), 50)
    nbytes = 2 * x.numel() * 8
    copy_gbs = nbytes / copy_ms / 1e6
    # Per step: two sweeps, each reads one array once (neighbours from cache) and writes one.
    step_bytes = 2 * 2 * (N - 2) ** 3 * 8
    lines = [f"# heat_3d N={N}, {a.steps} steps, fp64, {torch.cuda.get_device_name()}", "",
             f"copy bandwidth (torch copy_ of {N}^3 fp64): {copy_gbs:.0f} GB/s", "",
             "| variant | (MVL, warps) | ms | us/step | GB/s | of copy | ok |", "|---|---|---|---|---|---|---|"]
    configs = ((128, 1), (128, 2), (128, 4), (256, 2), (256, 4), (512, 4))
    for name in ["row", *[f"tile{r}" for r in TILES]]:
        mod = load(Path(a.modules) / f"{name}.py")
        for mvl, warps in configs:
            if name != "row" and mvl != 128:
                continue  # tiles have a fixed width
            def go(mod=mod, mvl=mvl, warps=warps):
                A, B = dev[0].clone(), dev[1].clone()
                mod._launch_heat_3d_persistent0(B, A, N, N, N, a.steps, (mvl, warps, 64))
                return A, B
            try:
                A, B = go()
                ok = np.allclose(A.cpu().numpy(), want[0]) and np.allclose(B.cpu().numpy(), want[1])
                ms = cuda_ms(torch, go, 5)
                gbs = step_bytes * a.steps / ms / 1e6
                line = (f"| {name} | ({mvl}, {warps}) | {ms:.2f} | {1000 * ms / a.steps:.1f} | "
                        f"{gbs:.0f} | {100 * gbs / copy_gbs:.0f} % | {'yes' if ok else 'NO'} |")
            except Exception as e:  # noqa: BLE001 - a failing variant is a row, not a crash
                line = f"| {name} | ({mvl}, {warps}) | {type(e).__name__}: {str(e)[:80]} | | | | |"
            print(line, flush=True)
            lines.append(line)
    (out / "heat3d_results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
