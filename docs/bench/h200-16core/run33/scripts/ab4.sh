#!/bin/bash
# old/new probe summary, alternating rounds; prints compact lines.
cd "$(dirname "$0")/.."
for round in $(seq 1 ${ROUNDS:-12}); do
  for b in ${A:-old} ${B:-new}; do
    .bench/bin/probe-$b summary | sed "s/^/$b r$round /"
  done
done > $OUT/ab.txt
python3 - $OUT/ab.txt ${A:-old} ${B:-new} <<'PY'
import sys, collections, statistics as st
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    b, r, n, t = f[0], f[1], f[2], f[3]
    vals = dict(zip(f[4::2], map(float, f[5::2])))
    d[(n, t, b)].append((r, vals))
for key in sorted({(n, t) for n, t, _ in d}):
    o, nw = d[key + (sys.argv[2],)], d[key + (sys.argv[3],)]
    for m in ['frame', 'cull', 'sort', 'batch']:
        a = [v[m] for _, v in o]; b = [v[m] for _, v in nw]
        ratios = sorted(y / x for x, y in zip(a, b))
        print(f"{key[0]} {key[1]} {m}: old med {st.median(a):.3f} [{min(a):.3f}-{max(a):.3f}] new med {st.median(b):.3f} [{min(b):.3f}-{max(b):.3f}] paired new/old med {st.median(ratios):.3f} faster {sum(r<1 for r in ratios)}/{len(ratios)}")
PY
