"""Variants of golden/distribute_jacobi2d.py's sweeps (text edits). Usage: edits.py OUTDIR"""
import re, sys
from pathlib import Path
SRC = (Path(__file__).resolve().parents[2] / "golden/distribute_jacobi2d.py").read_text()
LO, HI = "tl.maximum(1, _appyc_r0)", "tl.minimum(M - 1, _appyc_r1)"

def sweep_lines(text, fn):
    out = []
    for line in text.split("\n"):
        out.append(fn(line))
    return "\n".join(out)

def local(text):
    """Rows in block coordinates: lo/hi computed once per phase, no `- _appyc_o` in addresses."""
    def fn(line):
        m = re.match(r"(\s+)(_n(\d)_1) = tl.maximum\(tl.cdiv\(\(" + re.escape(HI) + r"\) - \(" + re.escape(LO) + r"\), ROW_BLOCK\), 0\)$", line)
        if m:
            ind, r = m.group(1), m.group(3)
            return (f"{ind}_lo{r} = {LO} - _appyc_o\n{ind}_hi{r} = {HI} - _appyc_o\n"
                    f"{ind}_n{r}_1 = tl.maximum(tl.cdiv(_hi{r} - _lo{r}, ROW_BLOCK), 0)")
        return line
    text = sweep_lines(text, fn)
    for r in "49":
        text = re.sub(r"_p0 = " + re.escape(LO) + rf" \+ _pid{r}_1", f"_p0 = _lo{r} + _pid{r}_1", text)
    text = text.replace("_p0_mask = _p0 < " + HI, "_p0_mask = _p0 < _HI_")
    # each region's mask takes its own _hi
    parts = text.split("if _region == 9:")
    parts[0] = parts[0].replace("_HI_", "_hi4"); parts[1] = parts[1].replace("_HI_", "_hi9")
    text = "if _region == 9:".join(parts)
    text = text.replace("(_p0[:, None] - _appyc_o)", "_p0[:, None]")
    text = text.replace("(_p0[:, None] + 1 - _appyc_o)", "(_p0[:, None] + 1)")
    text = text.replace("(_p0[:, None] - 1 - _appyc_o)", "(_p0[:, None] - 1)")
    assert "- _appyc_o)" not in text.split("def _jacobi_2d_distributed(")[1].split("def _launch")[0]
    return text

def hoist(text):
    """Only the clipped bounds hoisted into scalars (global rows, `- _appyc_o` kept)."""
    def fn(line):
        m = re.match(r"(\s+)(_n(\d)_1) = tl.maximum\(tl.cdiv\(\(" + re.escape(HI) + r"\) - \(" + re.escape(LO) + r"\), ROW_BLOCK\), 0\)$", line)
        if m:
            ind, r = m.group(1), m.group(3)
            return (f"{ind}_lo{r} = {LO}\n{ind}_hi{r} = {HI}\n"
                    f"{ind}_n{r}_1 = tl.maximum(tl.cdiv(_hi{r} - _lo{r}, ROW_BLOCK), 0)")
        return line
    text = sweep_lines(text, fn)
    for r in "49":
        text = text.replace(f"_p0 = {LO} + _pid{r}_1", f"_p0 = _lo{r} + _pid{r}_1")
    parts = text.split("if _region == 9:")
    parts[0] = parts[0].replace("_p0_mask = _p0 < " + HI, "_p0_mask = _p0 < _hi4")
    parts[1] = parts[1].replace("_p0_mask = _p0 < " + HI, "_p0_mask = _p0 < _hi9")
    return "if _region == 9:".join(parts)

def base(text):
    """`_appyc_o` folded into base pointers once per phase (global rows in the addresses)."""
    k = text.split("def _jacobi_2d_distributed(")[1].split("def _launch")[0]
    new = k
    for r, (dst, src) in (("4", ("B", "A")), ("9", ("A", "B"))):
        seg = new.split(f"if _region == {r}:")[1].split("if GRID_SYNC")[0]
        s2 = seg.replace("(_p0[:, None] - _appyc_o)", "_p0[:, None]").replace("(_p0[:, None] + 1 - _appyc_o)", "(_p0[:, None] + 1)").replace("(_p0[:, None] - 1 - _appyc_o)", "(_p0[:, None] - 1)")
        s2 = s2.replace(f"tl.store({dst} + ", f"tl.store({dst}_blk + ").replace(f"tl.load({src} + ", f"tl.load({src}_blk + ")
        ind = re.search(r"\n(\s+)_n\d_1 = ", s2).group(1)
        s2 = s2.replace(f"\n{ind}_n{r}_1 = ", f"\n{ind}A_blk = A - _appyc_o * A_stride0\n{ind}B_blk = B - _appyc_o * B_stride0\n{ind}_n{r}_1 = ", 1)
        new = new.replace(seg, s2)
    return text.replace(k, new)

def nospec_o(text):
    return text.replace('do_not_specialize=["_phase_lo", "_phase_hi", "_appyc_up", "_appyc_down"])\ndef _jacobi_2d_distributed(',
                        'do_not_specialize=["_phase_lo", "_phase_hi", "_appyc_up", "_appyc_down", "_appyc_r0", "_appyc_r1", "M"])\ndef _jacobi_2d_distributed(')

VARIANTS = {"local": [local], "hoist": [hoist], "base": [base], "hoist_nospec": [hoist, nospec_o], "local_nospec": [local, nospec_o]}
out = Path(sys.argv[1]); out.mkdir(exist_ok=True)
for name, fns in VARIANTS.items():
    t = SRC
    for f in fns:
        t2 = f(t); assert t2 != t, (name, f.__name__); t = t2
    (out / f"dist_{name}.py").write_text(t)
    print(name)
