"""Where a warm first call's time goes (issue 6: first call <= 0.5 s once the tuning cache is warm).

Each case runs in fresh processes sharing one APPYC_CACHE_DIR and TRITON_CACHE_DIR: a cold
process fills the caches, then warm processes time the first call of the compiled function on
NPBench's inputs (already on the device), once more with the memo of Triton's installation hash
turned off, and profile it with cProfile. A bare Triton kernel's
first call in a warm process is the floor that appyc's launch path is compared with.

    python3 bench/gpu_first_call.py --modules gen_npbench --out $OUT [--kernels a,b] [--top 25]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# bench_npbench.py, which the case processes import, lives in scripts/.
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"

BARE = r'''
import time, torch, triton, triton.language as tl
torch.zeros(1, device="cuda"); torch.cuda.synchronize()
@triton.jit
def _bare_copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)
x = torch.rand(1 << 20, device="cuda", dtype=torch.float64); y = torch.empty_like(x)
t0 = time.perf_counter()
_bare_copy[(x.numel() // 1024,)](x, y, x.numel(), BLOCK=1024)
torch.cuda.synchronize()
first = time.perf_counter() - t0
t0 = time.perf_counter()
_bare_copy[(x.numel() // 1024,)](x, y, x.numel(), BLOCK=1024)
torch.cuda.synchronize()
print("RESULT", {"first_s": first, "second_s": time.perf_counter() - t0})
'''

CASE = r'''
import cProfile, importlib.util, io, pstats, sys, time
sys.path.insert(0, {scripts!r})
import numpy as np, torch
import bench_npbench as bn
torch.zeros(1, device="cuda"); torch.cuda.synchronize()
t0 = time.perf_counter()
spec = importlib.util.spec_from_file_location("m", {path!r})
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
import_s = time.perf_counter() - t0
args = bn.make_inputs({kernel!r}, "paper")
dev = [torch.from_numpy(v).cuda() if isinstance(v, np.ndarray) else v for _, v in args]
torch.cuda.synchronize()
fn = getattr(mod, {kernel!r})
prof = cProfile.Profile() if {profile!r} else None
t0 = time.perf_counter()
if prof: prof.enable()
fn(*dev); torch.cuda.synchronize()
if prof: prof.disable()
first = time.perf_counter() - t0
t0 = time.perf_counter()
fn(*dev); torch.cuda.synchronize()
second = time.perf_counter() - t0
print("RESULT", {{"import_s": import_s, "first_s": first, "second_s": second}})
if prof:
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats({top})
    print(s.getvalue())
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats({top})
    print(s.getvalue())
'''


def run(code, env, timeout):
    # A file, not `-c`: Triton reads a kernel's source from its file.
    script = Path(env["APPYC_CACHE_DIR"]).parent / "case.py"
    script.write_text(code)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=timeout)
    wall = time.perf_counter() - t0
    result = None
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            result = eval(line[len("RESULT "):])  # our own child's dict literal
    return result, p.stdout, p.stderr[-3000:], wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modules", required=True)
    ap.add_argument("--out", default=".")
    ap.add_argument("--kernels", default="jacobi_1d,gemm,gemver,softmax")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--timeout", type=int, default=120)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    summary = {}
    with tempfile.TemporaryDirectory() as root:
        env = dict(os.environ, APPYC_CACHE_DIR=f"{root}/appyc", TRITON_CACHE_DIR=f"{root}/triton",
                   PYTHONUNBUFFERED="1")
        for label in ("bare_cold", "bare_warm"):
            code = BARE
            r, _, err, wall = run(code, env, a.timeout)
            summary[label] = dict(r or {"error": err}, process_s=wall)
            print(label, summary[label], flush=True)
        for kernel in a.kernels.split(","):
            path = str(Path(a.modules).resolve() / f"{kernel}.py")
            # warm_unmemoized: APPYC_TRITON_KEY_CACHE=0, Triton hashes its installation again.
            for label, profile in (("cold", False), ("warm", False), ("warm_unmemoized", False),
                                   ("warm_profiled", True)):
                code = CASE.format(scripts=str(SCRIPTS), path=path, kernel=kernel, profile=profile,
                                   top=a.top)
                case_env = dict(env, APPYC_TRITON_KEY_CACHE="0" if label == "warm_unmemoized" else "1")
                try:
                    r, stdout, err, wall = run(code, case_env, a.timeout)
                except subprocess.TimeoutExpired:
                    r, stdout, err, wall = None, "", "timeout", a.timeout
                summary[f"{kernel}_{label}"] = dict(r or {"error": err}, process_s=wall)
                print(kernel, label, summary[f"{kernel}_{label}"], flush=True)
                if profile:
                    (out / f"profile_{kernel}.txt").write_text(stdout + "\n" + err)
    (out / "first_call.json").write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
