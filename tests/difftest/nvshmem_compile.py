"""Links every kernel of the multi-GPU samples against NVSHMEM's libnvshmem_device.bc for an H100
(sm_90), without a GPU: a symbol, type or signature error in the shim fails here.

Run by test_nvshmem_compile.py in a subprocess without TRITON_INTERPRET (gpu_compile.py's
launch interception: Triton's own binder for sm_90, then `triton.compile` with the launch's
options, here with `extern_libs` naming the device library). The host runtime is replaced by a
stand-in (PE 0 of 2, symmetric allocation is the identity) and `_appyc_nvshmem_persistent` by the
one cooperative launch the GPU would make. Each module is linked with its waits bounded (the
default) and, at MVL 512, with the bounds compiled out (`_APPYC_NVSHMEM_BOUNDED` false, loaded
afresh), the form bench/gpu_nvshmem_waits.py measures against; puts by loads and stores (P2P, the
launch's choice on one node) and, at MVL 512, by NVSHMEM's calls.

Usage: python nvshmem_compile.py LIBRARY REQUEST.json RESULT.json
REQUEST: {"cases": {case name: path of the generated module}}
RESULT:  {case name: {"host_error": str or null, "compiles": [...]}} (as gpu_compile.py)
"""
import json
import sys
import traceback
from pathlib import Path

import gpu_compile as gc  # unsets TRITON_INTERPRET before triton is imported

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton.language as tl  # noqa: E402

from nvshmem_cases import CASES, DIST_CASES  # noqa: E402
from test_samples import load_module  # noqa: E402


class Host:
    """PE 0 of 2; symmetric arrays are the arrays themselves."""

    @staticmethod
    def my_pe():
        return 0

    @staticmethod
    def n_pes():
        return 2

    @staticmethod
    def symmetric(t):
        return t

    @staticmethod
    def check_symmetric(*arrays):
        pass

    # `#pragma distribute`: PEs are on, a gather stacks this PE's rows twice.
    @staticmethod
    def distributed():
        return True

    @staticmethod
    def gather(t):
        return torch.stack([t, t])

    @staticmethod
    def host_barrier():
        pass


def main(library, request_path, result_path):
    request = json.loads(Path(request_path).read_text())
    gc._jit.JITFunction.run = gc.compiling_run
    libs = {"libnvshmem_device": library}

    def persistent(kernel, phases, work, args, mvl, num_warps, constants=None, sites=None, maxnreg=None,
                   state=None, kinds=""):
        tail = (torch.zeros(16, dtype=torch.int64),)  # the control buffer
        if state is not None:  # the registers' first values and the buffer of their last
            tail += (*state, torch.empty(max(len(state), 1), dtype=torch.float64))
        # The register cap of the real runtime (the launch's own, a distributed loop's): ptxas
        # must fit the kernel under it.
        kernel[(1,)](*args, 0, phases, *tail, MVL=mvl, GRID_SYNC=True, P2P=p2p, **(constants or {}),
                     num_warps=num_warps, launch_cooperative_grid=True, extern_libs=libs,
                     maxnreg=maxnreg or default_maxnreg)
        return None if state is None else list(state)  # nothing ran: the first values

    results = {}
    for name, path in request["cases"].items():
        gc._records = []
        host_error = None
        try:
            case = {**CASES, **DIST_CASES}[name]
            # The interpreter's vector length and the nvshmem default, puts by loads and stores
            # (nvshmem_ptr) and by NVSHMEM's calls; the bounds compiled out.
            for mvl, bounded, p2p in ((128, True, True), (512, True, True), (512, True, False), (512, False, True)):
                mod = load_module(Path(path), f"appyc_nvshmem_sm90_{name}_{bounded}")
                mod._APPYC_NVSHMEM_BOUNDED = tl.constexpr(bounded)
                mod._appyc_nvshmem_use(Host)
                default_maxnreg = mod._APPYC_NVSHMEM_MAXNREG
                mod._appyc_nvshmem_persistent = persistent
                mod._appyc_nvshmem_config = lambda _m, w, mvl=mvl: (mvl, w)
                # Loops of 2-D sweeps ask for the GPU model's configuration: none here (no GPU).
                mod._appyc_nvshmem_plane_config = lambda _m, w, mvl=mvl: (mvl, w, None)
                args = [torch.from_numpy(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a
                        for a in case.make_args(0, 2)]
                getattr(mod, case.function)(*args)
        except Exception:  # noqa: BLE001 - reported by the test
            host_error = traceback.format_exc(limit=8)
        results[name] = {"host_error": host_error, "compiles": gc._records}
    Path(result_path).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
