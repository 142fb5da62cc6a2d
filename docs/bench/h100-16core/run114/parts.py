# Run 114's part logs: per view and thread count, medians over the culls after the first
# 20 of each view: the cull's wall time, its parts' summed time (its work), the largest
# part, the parts' mean concurrency (work / wall), the workers that ran parts, and when
# the last part started and ended (µs after the cull began); then each view's work
# against one thread's. python3 parts.py DIR (log-OBJECTS-THREADS.txt files).
import glob, os, re, statistics, sys, collections

rows = collections.defaultdict(list)
for path in sorted(glob.glob(os.path.join(sys.argv[1], 'log-*-*.txt'))):
    objects, threads = map(int, re.findall(r'log-(\d+)-(\d+)', path)[0])
    seen = collections.Counter()
    for line in open(path):
        if not line.startswith('cull '):
            continue
        w = line.split()
        label, wall = w[1], int(w[5])
        seen[label] += 1
        if seen[label] <= 20:
            continue
        parts = [tuple(map(int, p.split(':'))) for p in w[8:]]
        work = sum(p[1] for p in parts)
        last_start = max(p[0] for p in parts)
        last_end = max(p[0] + p[1] for p in parts)
        workers = len({p[2] for p in parts})
        rows[(objects, label, threads)].append(
            (wall, work, max(p[1] for p in parts), work / wall, workers, last_start, last_end, len(parts)))

med = lambda xs: statistics.median(xs)
print('%8s %-12s %3s %6s %8s %8s %8s %6s %7s %8s %8s' % (
    'objects', 'view', 'thr', 'culls', 'wall us', 'work us', 'max us', 'conc', 'workers', 'last st', 'last end'))
for key in sorted(rows):
    r = rows[key]
    cols = [med([x[i] for x in r]) for i in range(8)]
    print('%8d %-12s %3d %6d %8.1f %8.1f %8.1f %6.2f %7.1f %8.1f %8.1f  parts %d' % (
        key[0], key[1], key[2], len(r), cols[0] / 1e3, cols[1] / 1e3, cols[2] / 1e3, cols[3], cols[4],
        cols[5] / 1e3, cols[6] / 1e3, cols[7]))
print()
print('work on T threads / work on one (medians)')
for (objects, label, threads) in sorted(rows):
    one = rows.get((objects, label, 1))
    if one and threads != 1:
        a = med([x[1] for x in one])
        b = med([x[1] for x in rows[(objects, label, threads)]])
        print('%8d %-12s %3d  %.2fx' % (objects, label, threads, b / a))
