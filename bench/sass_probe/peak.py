import re, sys
best = []
for l in open(sys.argv[1]):
    m = re.search(r"/\*([0-9a-f]+)\*/\s+(.*?);.*//\s*\|\s*(\d+)\s*\|", l)
    if m: best.append((int(m.group(3)), m.group(1), m.group(2).strip()))
best.sort(reverse=True)
for b in best[:4]: print("  ", b)
