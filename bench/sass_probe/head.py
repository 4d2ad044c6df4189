"""Live registers at each sweep loop's head (from nvdisasm -plr -lrm count) and the loop's peak."""
import re, sys
rows, labels, pending = [], {}, []
for l in open(sys.argv[1]):
    lm = re.match(r"^(\.L_x_\d+):", l)
    if lm: pending.append(lm.group(1)); continue
    m = re.search(r"/\*([0-9a-f]{4})\*/\s+(.*?);.*//\s*\|\s*(\d+)\s*\|", l)
    if m:
        for p in pending: labels[p] = len(rows)
        pending = []
        rows.append((int(m.group(1), 16), m.group(2).strip(), int(m.group(3))))
seen = set()
for i, (a, t, n) in enumerate(rows):
    if "DMUL" in t:
        for j in range(i, len(rows)):
            m = re.search(r"BRA `\((\.L_x_\d+)\)", rows[j][1])
            if m and labels[m.group(1)] <= i:
                s = labels[m.group(1)]; break
        if s in seen: continue
        seen.add(s)
        print(f"  loop 0x{rows[s][0]:x}: live at head {rows[s][2]}, peak {max(r[2] for r in rows[s:j+1])}")
