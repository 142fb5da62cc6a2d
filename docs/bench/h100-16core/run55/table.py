"""Run 55's rounds side by side: python3 table.py run55.txt (frame p50, job graph, and
sort[main] in ms of each round's median frame, per binary)."""
import collections
import re
import sys

rows = collections.defaultdict(list)
for blk in open(sys.argv[1]).read().split("== ")[1:]:
    lines = blk.strip().split("\n")
    b, _, r = lines[0].split()
    n, t, fr, jg = re.match(r"(\d+) objects, (\d+) threads.*frame ([\d.]+) ms.*job graph ([\d.]+)", lines[1]).groups()
    main = [l for l in lines[2:] if "sort[main]" in l][0].split("(")[1].rstrip(")")
    rows[(int(n), int(t), b)].append(f"{fr}/{jg}/{main}")
for k in sorted(rows):
    print(f"{k[0]:>8} objects {k[1]:>2} threads {k[2]:<4}: " + "  ".join(rows[k]))
