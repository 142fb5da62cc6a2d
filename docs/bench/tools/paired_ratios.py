# Paired ratios of a run's A/B lines ('round R demo-X objects O threads T frame F cull C sort S'):
# python3 paired_ratios.py ab.txt BASE NEW [min] prints, per (objects, threads), the median over rounds of
# NEW/BASE for each stage and how many rounds NEW was lower: of the runs' medians, or with `min` of their
# minimums (lines that carry them: 'min frame F cull C sort S' after the medians).
import sys, collections, statistics
rows = collections.defaultdict(dict)
at = 15 if len(sys.argv) > 4 and sys.argv[4] == 'min' else 8
for l in open(sys.argv[1]):
    w = l.split()
    if len(w) < 13: continue
    r, b, o, t = w[1], w[2], w[4], w[6]
    if len(w) <= at + 4: continue
    rows[(o, t)].setdefault(r, {})[b] = dict(frame=float(w[at]), cull=float(w[at + 2]), sort=float(w[at + 4]))
base, new = sys.argv[2], sys.argv[3]
for (o, t), rs in rows.items():
    out = []
    for stage in ('frame', 'cull', 'sort'):
        rat = [v[new][stage] / v[base][stage] for v in rs.values() if base in v and new in v]
        lower = sum(x < 1 for x in rat)
        out.append('%s %.3f (%d/%d lower)' % (stage, statistics.median(rat), lower, len(rat)))
    print('objects %7s threads %2s  ' % (o, t) + '  '.join(out))
