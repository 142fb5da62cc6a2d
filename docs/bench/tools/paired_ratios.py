# Paired ratios of a run's A/B lines ('round R demo-X objects O threads T frame F cull C sort S'):
# python3 paired_ratios.py ab.txt BASE NEW prints, per (objects, threads), the median over rounds of NEW/BASE
# for each stage and how many rounds NEW was lower.
import sys, collections, statistics
rows = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    w = l.split()
    if len(w) < 13: continue
    r, b, o, t = w[1], w[2], w[4], w[6]
    rows[(o, t)].setdefault(r, {})[b] = dict(frame=float(w[8]), cull=float(w[10]), sort=float(w[12]))
base, new = sys.argv[2], sys.argv[3]
for (o, t), rs in rows.items():
    out = []
    for stage in ('frame', 'cull', 'sort'):
        rat = [v[new][stage] / v[base][stage] for v in rs.values() if base in v and new in v]
        lower = sum(x < 1 for x in rat)
        out.append('%s %.3f (%d/%d lower)' % (stage, statistics.median(rat), lower, len(rat)))
    print('objects %7s threads %2s  ' % (o, t) + '  '.join(out))
