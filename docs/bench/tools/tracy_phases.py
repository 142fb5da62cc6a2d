# Per view and stage, the median, p10 and p90 of the demo's Tracy zones (cull, sort and its phases,
# batch, record) over the frames of a capture: python3 tracy_phases.py EVENTS.csv[.gz]
# (csvexport -u output).
import csv, sys, gzip, statistics, collections
path = sys.argv[1]
op = gzip.open if path.endswith('.gz') else open
ev = []
with op(path, 'rt') as f:
    r = csv.reader(f); next(r)
    for row in r:
        ev.append((int(row[3]), int(row[3]) + int(row[4]), row[0], row[5], row[6] if len(row) > 6 else ''))
by_thread = collections.defaultdict(list)
for e in ev: by_thread[e[3]].append(e)
res = collections.defaultdict(list)
for th, es in by_thread.items():
    es.sort()
    sorts = [e for e in es if e[2] == 'sort']
    j = 0
    for s in sorts:
        view = s[4].split()[1] if s[4] else '?'
        res[(view, 'sort')].append(s[1]-s[0])
        for e in es:
            if e[0] >= s[0] and e[1] <= s[1] and e[2] in ('sort-keys','radix-sort','sort-tail','gather-tail','merge-last','widen-gaps','set-aside','sort-set-aside','merge'):
                res[(view, e[2])].append(e[1]-e[0])
    for e in es:
        if e[2] in ('cull','batch','record'):
            res[(e[4].split()[1] if e[4] else '?', e[2])].append(e[1]-e[0])
for k in sorted(res):
    v = sorted(res[k]); n = len(v)
    print('%-12s %-10s n %4d median %7.1f us  p10 %7.1f p90 %7.1f' % (k[0], k[1], n, v[n//2]/1e3, v[n//10]/1e3, v[9*n//10]/1e3))
