"""Print the sweep loops (the loop bodies containing DMUL, or $ANCHOR: DFMA for the held-out
program, whose sweep has no DMUL) of a cuobjdump -sass file, with stats.
Usage: [ANCHOR=DFMA] loops.py FILE.sass [--print]"""
import os, re, sys
ANCHOR = os.environ.get("ANCHOR", "DMUL")
from collections import Counter
lines = []
for l in open(sys.argv[1]):
    m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\*", l)
    if m:
        lines.append((int(m.group(1), 16), m.group(2).rstrip(" ;")))
addr = {a: i for i, (a, _) in enumerate(lines)}
dm = [i for i, (_, t) in enumerate(lines) if ANCHOR in t]
done = set()
for d in dm:
    # back-edge: first branch after d going to a target <= lines[d][0]
    for j in range(d, len(lines)):
        m = re.search(r"BRA (?:P\d, )?0x([0-9a-f]+)", lines[j][1])
        if m and int(m.group(1), 16) <= lines[d][0]:
            s = addr[int(m.group(1), 16)]
            break
    if (s, j) in done:
        continue
    done.add((s, j))
    body = lines[s:j + 1]
    ops = Counter(re.sub(r"^@!?U?P\w+\s+", "", t).split()[0] for _, t in body)
    ints = sum(v for k, v in ops.items() if re.match(r"(IMAD|IADD|VIADD|LEA|SHF|LOP|ISETP|SEL|IABS|I2F|F2I|MUFU|P2R|R2P|PLOP|ULDC|UIADD|UMOV|MOV|CS2R|IMNMX|VIMNMX|SGXT|PRMT|FLO|POPC|BMSK|FSETP|FADD|FMUL|FFMA|FRND|S2R|S2UR|BSSY|BSYNC)", k))
    first_use = next(k for k, (_, t) in enumerate(body) if t.split()[0].lstrip("@!P0123456").startswith("DADD") or re.match(r"(@!?P\d\s+)?DADD", t))
    ldg_before = sum(1 for _, t in body[:first_use] if "LDG" in t)
    pred = sum(1 for _, t in body if t.startswith("@") and ("LDG" in t or "STG" in t))
    print(f"loop 0x{body[0][0]:x}-0x{body[-1][0]:x}: {len(body)} instrs; LDG before 1st DADD: {ldg_before}; "
          f"predicated LDG/STG: {pred}; integer-ish: {ints}")
    print("   ", dict(sorted(ops.items(), key=lambda kv: -kv[1])))
    if "--print" in sys.argv:
        for a, t in body:
            print(f"      {a:05x}  {t}")
