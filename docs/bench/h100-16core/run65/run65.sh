#!/bin/bash
# Run 65: the sort's phases in the report's frame row (frame_spans with a phase probe, not
# kept), rotating rounds of three builds: "base" (the tree of f02bddb), "runs" (runs of
# equal keys sorted by value only where one is out of order), "aside" (runs, and the
# nearly-sorted path's set-aside pairs copied by one thread below 8k), "ties" (aside, and a survey counts ties out of order only where it found no descent; 78653f9 with the probe), "prio" (ties, and the
# main view's cull before the shadow views' culls: a graph edge, a probe).
# 100k objects at 1 and 16 threads, 1M at 16.
nproc; lscpu | grep -E "Model name|Thread"
for r in 1 2 3; do
  for b in base runs aside ties prio; do
    for a in "100000 1" "100000 16" "1000000 16"; do
      echo "== round $r $b $a"; .bench/bin/fs_$b $a 300
    done
  done
done
