#!/bin/bash
# Run 72: module `runs` (kernels/src/sort/runs.rs) in two versions against the sorter
# before it (6cd3c68, "old"): "runs" (8245f22: up to 32k pairs of evenly spread keys on
# 4+ threads, runs taken before any survey of the whole input, each surveyed and sorted
# by its own worker, sorted into whichever arrays make the last merge write the
# caller's) and "runs3" (the same, each run sorted by a one-thread sorter of its own, and
# up to 64k pairs that a sample finds nearly sorted on 8+ threads too). The report's
# cells for 16k uniform and 16k and 64k frame-coherent pairs (`sort_cells`, 9 rounds),
# two rounds, the builds in rotating order.
nproc; lscpu | grep -E "Model name|Thread"
builds=(old runs runs3)
for r in 0 1; do
  for i in 0 1 2; do
    b=${builds[$(( (r + i) % 3 ))]}
    echo "== round $((r + 1)) $b"
    SORT_CELLS=uniform:16384,frame:16384,frame:65536 .bench/bin/sort_cells_$b 9 1 2 4 8 16
  done
done
