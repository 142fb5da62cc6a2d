#!/bin/bash
# Run 93 on the 16-core H100: sort_cells (benches/examples/sort_cells.rs) at 10M uniform and
# render-shaped pairs on 1, 4 and 16 threads, three rounds each call, with the scratch's
# huge-page advice off (NOHUGE=1, a switch of this binary only) and on, alternating twice.
cd "$(dirname "$0")/../../../.."
B=.bench/bin; R=/tmp/r93; mkdir -p $R
lscpu > $R/machine.txt 2>&1
for round in 1 2; do
  for h in off on; do
    if [ $h = off ]; then export NOHUGE=1; else unset NOHUGE; fi
    echo "== round $round, huge-page advice $h"
    SORT_CELLS=render:10000000,uniform:10000000 timeout 200 $B/sort_cells_huge 3 1 4 16 2>&1 | tail -6
  done
done > $R/cells.txt 2>&1
tar czf $OUT/run93.tgz -C $R .
cat $R/cells.txt
