#!/usr/bin/env python3
"""Why the NVSHMEM Jacobi-2D kernel is slower than appyc's single-GPU persistent one: times the
generated Listing 8 module (golden/nvshmem_jacobi2d_l8.py) as committed and with one change at a
time, made to the module text (load modifiers, launch configuration, the wait's fence). Every
variant's result is checked against NumPy first. Under torchrun, one process per GPU:

    torchrun --standalone --nproc-per-node 2 bench/gpu_nvshmem_variants.py --out $OUT
"""
import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ["NVSHMEM_DISABLE_NVLS"] = "1"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NCCL_NVLS_ENABLE"] = "0"
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "difftest"))
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "scripts"))

from gpu_nvshmem import microseconds_per_iteration  # noqa: E402  (after the environment above)

FENCE = ('    tl.inline_asm_elementwise("fence.acq_rel.sys; mov.u32 $0, 0;", "=r", [], dtype=tl.int32, '
         'is_pure=False, pack=1)\n    tl.debug_barrier()\n')
WAIT_TAIL = "tl.zeros((), tl.int64) + value)\n    tl.debug_barrier()\n"

# name -> list of (old, new) text replacements of the generated module
VARIANTS = {
    "as generated": [],
    "plain loads": [(', cache_modifier=".cg"', "")],
    "plain loads + sys fence after wait": [(', cache_modifier=".cg"', ""),
                                           (WAIT_TAIL, "tl.zeros((), tl.int64) + value)\n" + FENCE)],
    "MVL 512": [("_appyc_nvshmem_config(1024, 4)", "_appyc_nvshmem_config(512, 4)")],
    "MVL 2048 w8": [("_appyc_nvshmem_config(1024, 4)", "_appyc_nvshmem_config(2048, 8)")],
    "MVL 1024 w8": [("_appyc_nvshmem_config(1024, 4)", "_appyc_nvshmem_config(1024, 8)")],
    "wait by thread 0": [("    _appyc_nvshmem_signal_wait_until(flag.to(tl.int64)",
                          "    if _appyc_nvshmem_thread0():\n        _appyc_nvshmem_signal_wait_until(flag.to(tl.int64)")],
    "wait by program 0": [("            _appyc_nvshmem_wait(", "            if _pid == 0:\n                _appyc_nvshmem_wait(")],
    "maxnreg 64": [("launch_cooperative_grid=True,", "launch_cooperative_grid=True, maxnreg=64,")],
    "maxnreg 64, MVL 512, wait by program 0": [
        ("launch_cooperative_grid=True,", "launch_cooperative_grid=True, maxnreg=64,"),
        ("_appyc_nvshmem_config(1024, 4)", "_appyc_nvshmem_config(512, 4)"),
        ("            _appyc_nvshmem_wait(", "            if _pid == 0:\n                _appyc_nvshmem_wait(")],
}

for _mvl in (512, 1024):
    for _reg in (48, 64, 80):
        VARIANTS[f"MVL {_mvl}, maxnreg {_reg}"] = [
            ("_appyc_nvshmem_config(1024, 4)", f"_appyc_nvshmem_config({_mvl}, 4)"),
            ("launch_cooperative_grid=True,", f"launch_cooperative_grid=True, maxnreg={_reg},")]

SAMPLES = {"l8": ("nvshmem_jacobi2d_l8", "jacobi_2d"), "l9": ("nvshmem_jacobi2d_l9", "jacobi_2d"),
           "3d": ("nvshmem_jacobi3d", "jacobi_3d")}


def main(args):
    for sample in args.samples.split(","):
        run_sample(args, sample)


def run_sample(args, sample):
    import numpy as np
    import torch
    import torch.distributed as dist

    from nvshmem_cases import Jacobi2D, Jacobi3D

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group("nccl", device_id=device)
    module, function = SAMPLES[sample]
    base = (ROOT / "golden" / f"{module}.py").read_text()
    k = 1 if sample == "l9" else 2
    tmp = Path(tempfile.mkdtemp())
    single_spec = importlib.util.spec_from_file_location("single", ROOT / "golden" / "jacobi_2d.py")
    single = importlib.util.module_from_spec(single_spec)
    single_spec.loader.exec_module(single)
    results = {}
    t0 = time.monotonic()

    def per_iteration(run):
        return microseconds_per_iteration(run, 20, 220, 3)

    for i, (name, edits) in enumerate(VARIANTS.items()):
        if args.only and name not in args.only.split(";"):
            continue
        text = base
        for old, new in edits:
            assert old in text, (name, old)
            text = text.replace(old, new)
        path = tmp / f"{sample}_variant{i}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(f"{sample}_variant{i}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        row = {}
        try:
            case = (Jacobi3D("x", planes=20, m=67, n=129, T=3) if sample == "3d"
                    else Jacobi2D("x", rows=300, cols=1001, T=7, steps_per_iteration=k))
            a = [mod._appyc_nvshmem_symmetric(torch.from_numpy(x).to(device)) if isinstance(x, np.ndarray) else x
                 for x in case.make_args(rank, world)]
            getattr(mod, function)(*a)
            torch.cuda.synchronize()
            slab = a[0][1:-1].contiguous()
            parts = [torch.empty_like(slab) for _ in range(world)]
            dist.all_gather(parts, slab)
            row["error"] = float(np.abs(torch.cat(parts).cpu().numpy() - case.expected(world)).max())
            for n in (args.sizes3d if sample == "3d" else args.sizes):
                if sample == "3d":
                    A0, B0, *extents, _ = Jacobi3D("x", planes=n, m=n, n=n, T=1).make_args(rank, world)
                else:
                    A0, B0, *extents, _ = Jacobi2D("x", rows=n, cols=n, T=1).make_args(rank, world)
                A = mod._appyc_nvshmem_symmetric(torch.from_numpy(A0).to(device))
                B = mod._appyc_nvshmem_symmetric(torch.from_numpy(B0).to(device))
                fn = getattr(mod, function)
                row[str(n)] = per_iteration(lambda t: fn(A, B, *extents, t * (2 // k)))
        except Exception as e:  # noqa: BLE001 - recorded
            row["failed"] = f"{type(e).__name__}: {e}"[:300]
        row["regs, spills, programs"] = [(c.n_regs, c.n_spills, p) for c, p in mod._APPYC_NVSHMEM_STATE["programs"].values()]
        results[name] = row
        if rank == 0:
            print(f"[{time.monotonic() - t0:6.1f}s] {sample} {name}: {row}", flush=True)
    if world == 1 and sample == "l8":
        row = {}
        for n in args.sizes:
            A0, _, *_ = Jacobi2D("x", rows=n, cols=n, T=1).make_args(0, 1)
            A = torch.from_numpy(A0).to(device)
            B = A.clone()
            row[str(n)] = per_iteration(lambda t: single.jacobi_2d(A, B, n + 2, n, t))
        for c in single._jacobi_2d_persistent0.device_caches[device.index][0].values():
            row.setdefault("regs, spills", []).append((c.n_regs, c.n_spills, c.metadata.num_warps))
        row["chosen"] = {str(k): v for k, v in single._jacobi_2d_persistent0_tuning.chosen.items()}
        results["appyc single-GPU persistent"] = row
        print(f"[{time.monotonic() - t0:6.1f}s] single: {row}", flush=True)
    if rank == 0:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"variants_{sample}_w{world}.json").write_text(json.dumps(results, indent=1))
    dist.barrier()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT", "variants_out"))
    ap.add_argument("--only", default="", help="variant names separated by ';'")
    ap.add_argument("--samples", default="l8", help="comma-separated: l8, l9, 3d")
    ap.add_argument("--sizes3d", type=int, nargs="+", default=[256, 512])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2048, 8192])
    main(ap.parse_args())
