# Each binary's frame scaling in a run's A/B lines (ab_demo.sh): per binary and object
# count, the median over rounds of the frame at one thread and at the most threads, and
# their ratio. python3 ab_scaling.py ab.txt
import sys, collections, statistics
frames = collections.defaultdict(list)
for l in open(sys.argv[1]):
    w = l.split()
    if len(w) < 9: continue
    frames[(w[2], int(w[4]), int(w[6]))].append(float(w[8]))
for b, o in sorted({(b, o) for b, o, _ in frames}):
    ts = sorted(t for bb, oo, t in frames if (bb, oo) == (b, o))
    if len(ts) < 2 or ts[0] != 1: continue
    one, most = statistics.median(frames[(b, o, 1)]), statistics.median(frames[(b, o, ts[-1])])
    print('%s objects %7d  1 thread %.3f ms  %d threads %.3f ms  scaling %.2fx' % (b, o, one, ts[-1], most, one / most))
