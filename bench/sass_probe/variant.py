"""Any generated row program's NVSHMEM persistent kernel (the held-out program's variants of
bench/gpu_heldout_variants.py, Listing 8) compiled for sm_90 as the runner launches it at 8192^2
per GPU (P2P, MVL 512, 4 warps, ROW_BLOCK 2, the module's register cap, NVSHMEM bitcode); the
kernel's arguments are made from their names. Writes OUT.cubin, OUT.sass; prints the registers.
Usage: variant.py MODULE.py OUTPREFIX"""
import re
import subprocess
import sys
from pathlib import Path

from heldout import gc, torch, triton, ASTSource, BIN, LIB, load  # noqa: F401


def argument(name, n):
    if name in ("U", "V", "A", "B"):
        return torch.empty(64, dtype=torch.float64)
    if name in ("got_u", "got_v", "flags"):
        return torch.zeros(4, dtype=torch.int64)
    if name in ("R", "M"):
        return n + 2
    if name in ("C", "N") or name.endswith("_shape1") or re.fullmatch(r"[UVAB]_stride0", name):
        return n
    if name in ("c",):
        return 0.1
    return 1  # neighbours, the other strides


def main(path, out):
    mod = load(path)
    k = next(v for name, v in vars(mod).items() if name.endswith("_persistent0"))
    n = 8192
    names = [a for a in k.arg_names if a not in ("_phase_lo", "_phase_hi", "_sync", "MVL", "GRID_SYNC", "P2P",
                                                  "ROW_BLOCK")]
    args = tuple(argument(a, n) for a in names)
    kw = dict(MVL=512, GRID_SYNC=True, P2P=True, ROW_BLOCK=mod._appyc_rows_a_program(512, n - 2),
              num_warps=4, launch_cooperative_grid=True, maxnreg=mod._APPYC_NVSHMEM_MAXNREG,
              extern_libs={"libnvshmem_device": LIB}, debug=False,
              instrumentation_mode=gc._jit.knobs.compilation.instrumentation_mode)
    bound, spec, options = gc._binder(k)(*args, 0, 100, torch.zeros(16, dtype=torch.int64), **kw)
    options, signature, constexprs, attrs = k._pack_args(gc.BACKEND, kw, bound, spec, options)
    c = triton.compile(ASTSource(k, signature, constexprs, attrs), target=gc.TARGET, options=options.__dict__)
    Path(out + ".cubin").write_bytes(c.asm["cubin"])
    sass = subprocess.run([str(BIN / "cuobjdump"), "-sass", out + ".cubin"], capture_output=True, text=True).stdout
    Path(out + ".sass").write_text(sass)
    res = subprocess.run([str(BIN / "cuobjdump"), "-res-usage", out + ".cubin"], capture_output=True, text=True).stdout
    print(Path(path).stem, re.findall(r"REG:\d+ STACK:\d+ SHARED:\d+ LOCAL:\d+", res))


if __name__ == "__main__":
    main(*sys.argv[1:])
