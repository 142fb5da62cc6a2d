# The named zones of the capture's median frame (skipping the first 30 frames), in time order, in
# microseconds from the frame's start: python3 tracy_frame.py EVENTS.csv[.gz] [ZONES,TO,SKIP]
import csv, sys, gzip
path = sys.argv[1]; skip = set(sys.argv[2].split(',')) if len(sys.argv) > 2 else set()
op = gzip.open if path.endswith('.gz') else open
ev = []
with op(path, 'rt') as f:
    r = csv.reader(f); next(r)
    for row in r:
        ev.append((int(row[3]), int(row[3]) + int(row[4]), row[0], row[5], row[6] if len(row) > 6 else ''))
frames = sorted([e for e in ev if e[2] == 'frame'])[30:]
durs = sorted(e[1]-e[0] for e in frames); med = durs[len(durs)//2]
pick = min(frames, key=lambda e: abs((e[1]-e[0]) - med))
s0, s1 = pick[0], pick[1]
print('frame us', (s1-s0)/1e3)
for e in sorted(e for e in ev if e[1] > s0 and e[0] < s1 and e[2] not in skip and e[2] != 'frame'):
    print('%8.1f %8.1f %7.1f t%-3s %s %s' % ((e[0]-s0)/1e3, (e[1]-s0)/1e3, (e[1]-e[0])/1e3, e[3], e[2], e[4][:50]))
