#!/bin/bash
# Run 61: are 16k and 64k uniform / render-shaped pairs sorted faster on multi-thread pools
# by one thread? benches/examples/sort_cells.rs (the tree of 7ed2632) with a probe patch
# (not kept): PROBE_SERIAL_BELOW=N sorts inputs below N pairs on one thread whatever the
# pool (0: as committed). Three rounds alternating the two settings.
S=.bench/bin/sort_cells-probe
for round in 1 2 3; do
  for below in 0 131072; do
    echo "== round $round below=$below"
    SORT_CELLS=uniform:16384,render:16384,uniform:65536,render:65536 PROBE_SERIAL_BELOW=$below $S 9 1 2 4 8 16
  done
done
