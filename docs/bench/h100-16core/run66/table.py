#!/usr/bin/env python3
"""Run 66's rounds as a table: per build and configuration, each round's median frame,
job graph, sort[main] span and the probe's sort phases (mean us of the main view's sorts)."""
import re, sys
from collections import defaultdict

rows = defaultdict(list)
cur = None
for line in open(sys.argv[1] if len(sys.argv) > 1 else "run66.txt"):
    if line.startswith("== round"):
        _, _, r, build, objects, threads = line.split()
        cur = (build, int(objects), int(threads))
        rows[cur].append({})
        continue
    if cur is None:
        continue
    d = rows[cur][-1]
    m = re.search(r"frame ([\d.]+) ms.*job graph ([\d.]+)", line)
    if m:
        d["frame"], d["graph"] = m.groups()
    m = re.search(r"keys ([\d.]+), widen ([\d.]+), set-aside ([\d.]+), rest-sort ([\d.]+), merge ([\d.]+), whole ([\d.]+)", line)
    if m:
        d["phases"] = "/".join(m.groups())
    m = re.search(r"marks ([\d.]+) take ([\d.]+) write ([\d.]+) survey ([\d.]+) gaps ([\d.]+)", line)
    if m:
        d["keys"] = "/".join(m.groups())
    m = re.search(r"sort\[main\]\s+[\d.]+ .\s+[\d.]+\s+\(([\d.]+)\)", line)
    if m:
        d["sort"] = m.group(1)

print("build | objects | threads | frame ms (rounds) | job graph ms | sort[main] ms | sort phases us: keys/widen/set-aside/rest-sort/merge/whole | keys phase us summed: marks/take/write/survey/gaps")
for (build, objects, threads), rs in rows.items():
    col = lambda k: ", ".join(r.get(k, "-") for r in rs)
    print(f"{build} | {objects} | {threads} | {col('frame')} | {col('graph')} | {col('sort')} | {rs[0].get('phases', '-')} (round 1) | {rs[0].get('keys', '-')} (round 1)")
