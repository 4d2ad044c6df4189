"""Compile a generated module's NVSHMEM persistent kernel for sm_90 exactly as the launch would
(P2P, MVL 512, 4 warps, maxnreg 80, ROW_BLOCK 2, NVSHMEM bitcode), dump ptx/sass/res-usage.
Usage: sass.py MODULE.py KIND(l8|d0|d1) OUTPREFIX"""
import importlib.util, os, subprocess, sys, re
from pathlib import Path
os.environ.pop("TRITON_INTERPRET", None)
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "difftest"))
import gpu_compile as gc  # noqa
import torch, triton  # noqa
from triton.compiler.compiler import ASTSource  # noqa
from nvidia import nvshmem as _nv  # noqa

LIB = str(Path(_nv.__path__[0]) / "lib" / "libnvshmem_device.bc")
BIN = Path(triton.__file__).parent / "backends/nvidia/bin"

def load(path):
    spec = importlib.util.spec_from_file_location("m_" + re.sub(r"\W", "_", path), path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m

def main(path, kind, out):
    mod = load(path)
    A = torch.empty(64, dtype=torch.float64); B = torch.empty(64, dtype=torch.float64)
    flags = torch.zeros(4, dtype=torch.int64); ctl = torch.zeros(16, dtype=torch.int64)
    rb = mod._appyc_rows_a_program(512, 8190)
    n = 8192
    if kind == "l8":
        k = mod._jacobi_2d_persistent0
        args = (A, flags, B, n + 2, n, 1, 1, n, 1, 1, n, 1, 1)
    else:
        k = mod._jacobi_2d_distributed
        rows = 2 * n
        pe = int(kind[1])
        r0, r1 = mod._appyc_dist_split(rows, 2, pe)
        u0, u1 = mod._appyc_dist_split(rows, 2, (pe + 1) % 2)
        o, up_halo, own = r0 - 1, 1 + (u1 - u0), r1 - r0
        args = (A, flags, B, up_halo, (pe + 1) % 2, own, (pe + 1) % 2, r0, rows, r1, n, o,
                n, 1, 1, n, 1, n, n)
        if getattr(mod, "_SASS_EXTRA", None):
            args = mod._SASS_EXTRA(args)
    kw = dict(MVL=512, GRID_SYNC=True, P2P=True, ROW_BLOCK=rb, num_warps=4, launch_cooperative_grid=True,
              maxnreg=mod._APPYC_NVSHMEM_MAXNREG, extern_libs={"libnvshmem_device": LIB})
    if os.environ.get("NOCAP"): kw.pop("maxnreg")
    if os.environ.get("P2P") == "0": kw["P2P"] = False
    if os.environ.get("MAXNREG"): kw["maxnreg"] = int(os.environ["MAXNREG"])
    kw["debug"] = False
    kw["instrumentation_mode"] = gc._jit.knobs.compilation.instrumentation_mode
    bound, spec, options = gc._binder(k)(*args, 0, 100, ctl, **kw)
    options, signature, constexprs, attrs = k._pack_args(gc.BACKEND, kw, bound, spec, options)
    print("constexprs", {str(a): v for a, v in constexprs.items()})
    print("attrs", {str(a): v for a, v in attrs.items()})
    c = triton.compile(ASTSource(k, signature, constexprs, attrs), target=gc.TARGET, options=options.__dict__)
    Path(out + ".ptx").write_text(c.asm["ptx"])
    Path(out + ".ttgir").write_text(c.asm["ttgir"])
    Path(out + ".cubin").write_bytes(c.asm["cubin"])
    sass = subprocess.run([str(BIN / "cuobjdump"), "-sass", out + ".cubin"], capture_output=True, text=True).stdout
    Path(out + ".sass").write_text(sass)
    res = subprocess.run([str(BIN / "cuobjdump"), "-res-usage", out + ".cubin"], capture_output=True, text=True).stdout
    print(re.findall(r"REG:\d+ STACK:\d+ SHARED:\d+ LOCAL:\d+", res))

if __name__ == "__main__":
    main(*sys.argv[1:])
