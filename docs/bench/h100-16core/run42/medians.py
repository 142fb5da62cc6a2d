# Medians and ranges of rows.txt (RUNS.md run 42): python3 medians.py
import re, statistics as st, collections
d = collections.defaultdict(list)
for l in open('rows.txt'):
    m = re.match(r'(\S+) r(\d+) \| (.*?) \| (\d+) \| ([^|]*) \|', l)
    if m:
        b, _, metric, t, val = m.groups()
        d[(metric.strip(), int(t), b)].append(float(val.split()[0].rstrip('x%')))
for k in sorted(d):
    v = d[k]
    print(k[0][:48], k[1], k[2], 'n=%d median %.2f range %.2f-%.2f' % (len(v), st.median(v), min(v), max(v)))
