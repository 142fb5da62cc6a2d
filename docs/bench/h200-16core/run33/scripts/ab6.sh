#!/bin/bash
# old / new / new with SY_CRITICAL=main, alternating rounds.
cd "$(dirname "$0")/.."
for round in $(seq 1 ${ROUNDS:-12}); do
  .bench/bin/probe-old summary | sed "s/^/old r$round /"
  .bench/bin/probe-new summary | sed "s/^/new r$round /"
  SY_CRITICAL=main .bench/bin/probe-new summary | sed "s/^/crit r$round /"
done > $OUT/ab.txt
python3 - $OUT/ab.txt <<'PY'
import sys, collections, statistics as st
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    b, r, n, t = f[0], f[1], f[2], f[3]
    vals = dict(zip(f[4::2], map(float, f[5::2])))
    d[(n, t, b)].append((r, vals))
for key in sorted({(n, t) for n, t, _ in d}):
    o = d[key + ('old',)]
    for nb in ['new', 'crit']:
        nw = d[key + (nb,)]
        for m in ['frame', 'sort']:
            a = [v[m] for _, v in o]; b = [v[m] for _, v in nw]
            ratios = sorted(y / x for x, y in zip(a, b))
            print(f"{key[0]} {key[1]} {m} {nb}: old med {st.median(a):.3f} new med {st.median(b):.3f} [{min(b):.3f}-{max(b):.3f}] paired med {st.median(ratios):.3f} faster {sum(r<1 for r in ratios)}/{len(ratios)}")
PY
.bench/bin/probe-new spans 100000 16 > $OUT/spans-new.txt
SY_CRITICAL=main .bench/bin/probe-new spans 100000 16 > $OUT/spans-crit.txt
