"""Compact schedule of the first sweep loop: L=LDG, D=DADD, M=DMUL, S=STG, '.'=other (x per 4).
The loop is found by its DMUL ($ANCHOR: another opcode, DFMA for the held-out program)."""
import re, sys
sys.argv += []
exec(open(__file__.replace("sig.py", "loops.py")).read().split("dm = [")[0])
dm = [i for i, (_, t) in enumerate(lines) if ANCHOR in t][0]
for j in range(dm, len(lines)):
    m = re.search(r"BRA (?:P\d, )?0x([0-9a-f]+)", lines[j][1])
    if m and int(m.group(1), 16) <= lines[dm][0]:
        s = addr[int(m.group(1), 16)]; break
out = ""
for _, t in lines[s:j+1]:
    out += "L" if "LDG" in t else "D" if "DADD" in t else "M" if "DMUL" in t else "S" if "STG" in t else "."
print(re.sub(r"\.+", lambda m: "." * ((len(m.group(0)) + 3) // 4), out))
