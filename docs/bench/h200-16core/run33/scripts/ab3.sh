#!/bin/bash
# Report frame rows (null backend), old vs new binary, alternating rounds; all outputs in one tarball.
cd "$(dirname "$0")/.."
L=$OUT/run; mkdir -p $L
START=$SECONDS
for round in $(seq 1 ${ROUNDS:-6}); do
  [ $((SECONDS - START)) -gt ${BUDGET:-420} ] && break
  for b in old new; do
    timeout 170 .bench/bin/report-$b --no-gpu --only frame --out $L/charts-$b-$round > $L/$b-r$round.txt 2>&1
    echo "$b r$round rc=$?" >> $L/rc.txt
  done
done
python3 - $L <<'PY'
import sys, glob, re, collections, statistics as st
rows = collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1] + '/*-r*.txt')):
    b = f.split('/')[-1].split('-')[0]
    for line in open(f):
        c = [x.strip() for x in line.split('|')]
        if len(c) < 8: continue
        m = c[1]
        if m.startswith('frame, null backend') and 'p50' in m:
            p50, p99 = map(float, c[3].split('/'))
            rows[(m.split(',')[2].strip(), c[2], b, 'p50')].append(p50)
            rows[(m.split(',')[2].strip(), c[2], b, 'p99')].append(p99)
        elif m.startswith('frame scaling'):
            rows[(m.split(',')[1].strip(), 'scaling', b, 'x')].append(float(c[3].rstrip('x')))
        elif m.startswith('utilization'):
            rows[(m.split(',')[2].split(':')[0].strip(), c[2], b, 'util')].append(float(c[3].rstrip(' %')))
keys = sorted({k[:2] + (k[3],) for k in rows}, key=lambda k: (k[0], k[2], int(k[1]) if k[1].isdigit() else 99))
for n, t, what in keys:
    o, nw = rows[(n, t, 'old', what)], rows[(n, t, 'new', what)]
    if not o or not nw: continue
    print(f"{n:13} {t:>7} {what:5} old med {st.median(o):7.3f} [{min(o):.3f}-{max(o):.3f}]  new med {st.median(nw):7.3f} [{min(nw):.3f}-{max(nw):.3f}]  new/old {st.median(nw)/st.median(o):.3f}")
PY
tar czf $OUT/run.tgz -C $OUT run
rm -rf $L
