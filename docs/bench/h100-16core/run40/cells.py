# Per-cell medians of out/cells_ab.txt (RUNS.md run 40): python3 cells.py
import re, statistics as st, collections
d = collections.defaultdict(list)
for l in open('out/cells_ab.txt'):
    m = re.match(r'(old|new) r(\d) (\S+(?: 3%)?)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+) (.*?)\s+([\d.]+)x', l)
    if m:
        b, _, shape, n, t, ours, _, _, ratio = m.groups()
        d[(shape, int(n), int(t), b)].append((float(ours), float(ratio)))
cells = sorted(set(k[:3] for k in d))
met = {'old': 0, 'new': 0}
total = 0
for c in cells:
    o, n = d.get(c + ('old',)), d.get(c + ('new',))
    if not o or not n:
        continue
    total += 1
    mo, mn = st.median(x[0] for x in o), st.median(x[0] for x in n)
    ro, rn = st.median(x[1] for x in o), st.median(x[1] for x in n)
    met['old'] += ro >= 1.0
    met['new'] += rn >= 1.0
    print(f"{c[0]:18s}{c[1]:>9d}{c[2]:>4d}  old {mo:7.1f} ({ro:.2f}x)  new {mn:7.1f} ({rn:.2f}x)  new/old {mn / mo:.2f}")
print(total, 'cells; at >= 1.0x the best baseline (median ratio): old', met['old'], 'new', met['new'])
