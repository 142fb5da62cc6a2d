# The work each Tracy zone does per frame, two captures side by side (one thread against
# many): each zone's self time (its duration less its children's on the same thread),
# summed per zone name over the capture's worker and calling threads, divided by the
# frames after the first SKIP (default 20: the first frames upload the scene).
# python3 zone_work.py ONE.csv.gz MANY.csv.gz [SKIP] (csvexport -u output).
# Zones named "work" (the busy-time regions) are transparent, but one outermost on its
# thread is a job, or a piece another worker took from a job on another thread: its self
# time (a piece's work, a job's time outside its named zones) is shown as "pieces of
# STAGE" where the zone's text names the job (`busy::timed_as`), else "(stolen pieces)"; a name's row reads
# "ms/frame on one thread, ms/frame on many, many/one". The zone "frame" is the calling
# thread's render call, whose self time is mostly its wait for the job graph: shown, not
# summed.
import csv, gzip, sys, collections


SKIP = int(sys.argv[3]) if len(sys.argv) > 3 else 20


def load(path):
    op = gzip.open if path.endswith('.gz') else open
    events = []
    with op(path, 'rt') as f:
        r = csv.reader(f)
        next(r)
        for row in r:
            events.append((row[0], int(row[3]), int(row[4]), row[5], row[6] if len(row) > 6 else ''))
    starts = sorted(e[1] for e in events if e[0] == 'frame')
    since = starts[SKIP] if len(starts) > SKIP else 0
    frames = sum(1 for s in starts if s >= since)
    by_thread = collections.defaultdict(list)
    for name, start, dur, thread, text in events:
        if start >= since:
            # a `work` zone's text names its job (busy::timed_as)
            if name == 'work' and text:
                name = 'work:' + text.split('[')[0]
            by_thread[thread].append((start, -dur, name))
    self_ns = collections.Counter()
    for es in by_thread.values():
        es.sort()
        stack = []  # [end, name, children's time, start]
        def close(e):
            d = e[0] - e[3]
            work = e[1].startswith('work')
            if not work:
                self_ns[e[1]] += d - e[2]
            elif not stack:
                # an outermost `work` zone: a piece another worker took (its job's zone is
                # on another thread) or a job's time outside its named zones
                self_ns['pieces of ' + e[1][5:] if ':' in e[1] else '(stolen pieces)'] += d - e[2]
            # a 'work' zone is transparent: its children's time counts to its parent
            if stack:
                stack[-1][2] += e[2] if work else d
        for start, neg, name in es:
            end = start - neg
            while stack and stack[-1][0] <= start:
                close(stack.pop())
            stack.append([end, name, 0, start])
        while stack:
            close(stack.pop())
    return self_ns, max(frames, 1)


(a, fa), (b, fb) = load(sys.argv[1]), load(sys.argv[2])
print('frames: %d and %d' % (fa, fb))
print('%-22s %10s %10s %7s' % ('zone', 'one ms/f', 'many ms/f', 'ratio'))
rows = sorted(set(a) | set(b), key=lambda n: -(b.get(n, 0) / fb))
ta = tb = 0
for n in rows:
    x, y = a.get(n, 0) / fa / 1e6, b.get(n, 0) / fb / 1e6
    if n != 'frame':
        ta, tb = ta + x, tb + y
    if max(x, y) >= 0.001:
        print('%-22s %10.3f %10.3f %7s' % (n, x, y, '%.2fx' % (y / x) if x > 0 else '-'))
print('%-22s %10.3f %10.3f %7.2fx' % ('all but frame', ta, tb, tb / ta if ta else 0))
