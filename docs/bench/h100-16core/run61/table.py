"""Run 61 as a table: ours (Mkeys/s) per cell and setting, each round's, and the best baseline's range."""
import re, sys, collections
ours, best = collections.defaultdict(list), collections.defaultdict(list)
below = None
for line in open(sys.argv[1] if len(sys.argv) > 1 else "run61.txt"):
    m = re.match(r"== round \d+ below=(\d+)", line)
    if m:
        below = int(m[1]); continue
    m = re.match(r"(\S+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)", line)
    if m and below is not None:
        cell = (m[1], int(m[2]), int(m[3]))
        ours[cell, below].append(m[4]); best[cell].append(float(m[5]))
for cell in sorted(best, key=lambda c: (c[0], c[1], c[2])):
    a, b = ours[cell, 0], ours[cell, 131072]
    print(f"{cell[0]:<14} {cell[1]:>6} {cell[2]:>2} threads: as committed {' '.join(a):<20} one thread {' '.join(b):<20} best baseline {min(best[cell]):.1f}-{max(best[cell]):.1f}")
