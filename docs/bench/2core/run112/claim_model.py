#!/usr/bin/env python3
"""A model, not a measurement: when would one view's cull end on 16 workers that claim its
parts in index order (the head before d48e844) or costliest first (d48e844), if each part
took what it took on one thread (part-times.txt: the demo at 1M objects, one thread, the
last frame of 30, printed by part-times.patch)? Each free worker claims the next part."""
import ast, heapq, sys

def makespan(times, order, workers):
    free = [0] * workers
    end = 0
    for i in order:
        t = heapq.heappop(free) + times[i]
        end = max(end, t)
        heapq.heappush(free, t)
    return end

for line in open(sys.argv[1] if len(sys.argv) > 1 else "part-times.txt"):
    _, name, rest = line.split(" ", 2)
    t = ast.literal_eval(rest)
    idx = list(range(len(t)))
    lpt = sorted(idx, key=lambda i: (-t[i], i))
    print(f"{name}: {len(t)} parts, sum {sum(t)} us, largest {max(t)}; on 16 workers, index order "
          f"ends at {makespan(t, idx, 16)} us, costliest first at {makespan(t, lpt, 16)}")
