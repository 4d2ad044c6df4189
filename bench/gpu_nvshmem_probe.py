#!/usr/bin/env python3
"""Which multi-PE samples leave NVSHMEM's heap broken: runs the samples named in argv[1]
(comma-separated keys of tests/difftest/nvshmem_cases.CASES) one after another in this process,
each followed by one more symmetric allocation (whose nvshmem_malloc barriers on the device)
and a synchronisation. Under torchrun, one process per GPU.

    torchrun --standalone --nproc-per-node 1 bench/gpu_nvshmem_probe.py jacobi2d_l8,jacobi3d
"""
import os
import sys
from pathlib import Path

os.environ["NVSHMEM_DISABLE_NVLS"] = "1"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NCCL_NVLS_ENABLE"] = "0"
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "difftest"))
sys.path.insert(0, str(ROOT / "python"))

import importlib.util  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from nvshmem_cases import CASES, Jacobi2D  # noqa: E402


def main(names, after, shape="", again=""):
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    for name in names.split(","):
        case = CASES[name]
        if shape:  # rows,cols,T for a Jacobi-2D case
            rows, cols, steps = map(int, shape.split(","))
            case = Jacobi2D(case.module, rows=rows, cols=cols, T=steps, steps_per_iteration=case.k)
        spec = importlib.util.spec_from_file_location(f"gen_{name}", ROOT / "golden" / f"{case.module}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)

        def sym(a, mod=mod):
            return mod._appyc_nvshmem_symmetric(torch.from_numpy(np.ascontiguousarray(a)).to(device))

        args = [sym(a) if isinstance(a, np.ndarray) else a for a in case.make_args(rank, world)]
        if after != "alloc-only":
            getattr(mod, case.function)(*args)
        if again:  # a second call with another T (a new Triton specialisation when T*phases hits 16)
            torch.cuda.synchronize()
            print(name, "first call done", flush=True)
            more = list(args)
            more[-1] = int(again)
            getattr(mod, case.function)(*more)
        torch.cuda.synchronize()
        if not again:
            err = float(np.abs(args[0][1:-1].cpu().numpy() - case.expected(world)).max())
            print(name, "ran, max error", err, flush=True)
        else:
            print(name, "ran twice", flush=True)
        extra = sym(np.zeros((1026, 1024)))
        torch.cuda.synchronize()
        print(name, "allocated after:", tuple(extra.shape), "ok", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(*sys.argv[1:5])
