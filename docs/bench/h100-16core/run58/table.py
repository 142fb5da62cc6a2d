"""Run 58's rounds as a table: frame / setup / job graph ms of each median frame, per binary."""
import re, sys, collections
rows = collections.defaultdict(list)
key = None
for line in open(sys.argv[1] if len(sys.argv) > 1 else "run58.txt"):
    m = re.match(r"== (\w+) (\d+) (\d+) div=(\d+)", line)
    if m:
        key = (int(m[2]), int(m[3]), m[1] + ("" if m[4] == "1" else f" div {m[4]}"))
        continue
    m = re.search(r"frame ([\d.]+) ms, setup ([\d.]+), job graph ([\d.]+)", line)
    if m and key:
        rows[key].append(f"{m[1]}/{m[2]}/{m[3]}")
for k in sorted(rows):
    print(f"{k[0]:>8} objects {k[1]:>2} threads {k[2]:<14} " + "  ".join(rows[k]))
