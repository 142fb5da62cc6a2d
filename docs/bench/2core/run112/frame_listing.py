#!/usr/bin/env python3
"""The jobs and pieces ("work" zones) of one frame of a Tracy event export, in start order,
in µs after the frame's start: name, thread, start, end, duration. Run 112 quotes the 121st
of 200 frames (index 120) of run 105's capture of c0c0579 at 1M objects on 16 threads:
  python3 frame_listing.py ../../h100-16core/run105/events-chained-1000000-16.csv.gz 120"""
import csv, gzip, sys

path, index = sys.argv[1], int(sys.argv[2])
rows = list(csv.DictReader(gzip.open(path, "rt")))
for r in rows:
    r["s"] = int(r["ns_since_start"])
    r["e"] = r["s"] + int(r["exec_time_ns"])
f = sorted((r for r in rows if r["name"] == "frame"), key=lambda r: r["s"])[index]
shown = {"cull", "sort", "batch", "record", "patch", "work", "sort-tail", "merge-last", "gather-tail"}
for r in sorted((r for r in rows if f["s"] <= r["s"] < f["e"] and r["name"] in shown), key=lambda r: r["s"]):
    s, e = (r["s"] - f["s"]) / 1e3, (r["e"] - f["s"]) / 1e3
    print(f"{r['name']:12s} t{r['thread']:>3s} {s:8.1f} {e:8.1f} {e - s:7.1f}")
