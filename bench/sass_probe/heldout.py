"""The held-out row program's persistent kernel (bench/nvshmem_heldout/heat_rows_gen.py) compiled
for sm_90 as the NVSHMEM runner launches it at 8192^2 per GPU (P2P, MVL 512, 4 warps, ROW_BLOCK
2, NVSHMEM bitcode) under register cap CAP (0: none); writes OUT.cubin and OUT.sass and prints
the registers. Then `ANCHOR=DFMA python loops.py OUT.sass` and `ANCHOR=DFMA python sig.py
OUT.sass` show its sweep's load order (performance.md 51).
Usage: heldout.py MODULE.py OUTPREFIX CAP"""
import os
import re
import subprocess
import sys
from pathlib import Path

os.environ.pop("TRITON_INTERPRET", None)
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "difftest"))
import gpu_compile as gc  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
from triton.compiler.compiler import ASTSource  # noqa: E402

from sass import BIN, LIB, load  # noqa: E402


def main(path, out, cap):
    mod = load(path)
    k = mod._heat_rows_persistent0
    U, V = torch.empty(64, dtype=torch.float64), torch.empty(64, dtype=torch.float64)
    got_u, got_v = torch.zeros(2, dtype=torch.int64), torch.zeros(2, dtype=torch.int64)
    control = torch.zeros(16, dtype=torch.int64)
    n = 8192
    rows, cols = n + 2, n
    args = (U, got_u, V, got_v, rows, 1, 1, cols, 0.1, cols, 1, 1, cols, 1, 1, cols, cols)
    kw = dict(MVL=512, GRID_SYNC=True, P2P=True, ROW_BLOCK=mod._appyc_rows_a_program(512, cols - 2),
              num_warps=4, launch_cooperative_grid=True, extern_libs={"libnvshmem_device": LIB},
              debug=False, instrumentation_mode=gc._jit.knobs.compilation.instrumentation_mode)
    if cap:
        kw["maxnreg"] = cap
    bound, spec, options = gc._binder(k)(*args, 0, 100, control, **kw)
    options, signature, constexprs, attrs = k._pack_args(gc.BACKEND, kw, bound, spec, options)
    c = triton.compile(ASTSource(k, signature, constexprs, attrs), target=gc.TARGET, options=options.__dict__)
    Path(out + ".cubin").write_bytes(c.asm["cubin"])
    sass = subprocess.run([str(BIN / "cuobjdump"), "-sass", out + ".cubin"], capture_output=True, text=True).stdout
    Path(out + ".sass").write_text(sass)
    res = subprocess.run([str(BIN / "cuobjdump"), "-res-usage", out + ".cubin"], capture_output=True, text=True).stdout
    print(cap, re.findall(r"REG:\d+ STACK:\d+ SHARED:\d+ LOCAL:\d+", res))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
