# Medians and per-round ratios of ab.txt (RUNS.md run 41): python3 ratios.py
import re, statistics as st
rows = {}
for l in open('ab.txt'):
    m = re.match(r'(\S+) n=(\d+) r(\d+)\s+cull\s+([\d.]+)\s+([\d.]+)\s+sort\s+([\d.]+)\s+([\d.]+)\s+frame \(cpu\)\s+([\d.]+)\s+([\d.]+)', l)
    if m:
        rows.setdefault((m.group(1), m.group(2)), {})[int(m.group(3))] = [float(m.group(i)) for i in range(4, 10)]
for n in ['100000', '1000000']:
    o, w = rows[('demo', n)], rows[('demo-new', n)]
    for b, v in (('demo', o), ('demo-new', w)):
        print(b, n, 'sort p50 %.3f  frame p50 %.3f  frame p99 %.3f' % tuple(st.median(x[i] for x in v.values()) for i in (2, 4, 5)))
    for what, i in (('frame p50', 4), ('sort p50', 2)):
        r = [w[k][i] / o[k][i] for k in sorted(o) if k in w]
        print(' ', n, what, 'ratio median %.2f (%.2f-%.2f)' % (st.median(r), min(r), max(r)))
