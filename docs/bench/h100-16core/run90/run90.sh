#!/bin/bash
# Run 90 on the 16-core H100: the probe (run 89's, with "ours, plain splits": a sorter
# with `streamed_splits` off) at 10M uniform and render-shaped pairs, one thread, five
# rounds; then `sort_cells` of e48c05f ("old") against the working tree that adds module
# `sort/stream.rs` ("new"), 10M uniform pairs on 1/2/4/8/16 threads, two rounds a cell,
# binaries alternating old, new, old, new.
cd "$(dirname "$0")/../../../.."
B=.bench/bin; R=/tmp/r90; mkdir -p $R
timeout 120 $B/sort_probe10m 5 10485760 > $R/probe-uniform.txt 2>&1; echo "rc=$?" >> $R/probe-uniform.txt
PROBE_SHAPE=render timeout 120 $B/sort_probe10m 5 10485760 > $R/probe-render.txt 2>&1; echo "rc=$?" >> $R/probe-render.txt
grep -E "ours|vorac|rc=" $R/probe-uniform.txt $R/probe-render.txt
mkdir -p $OUT/run90 && cp $R/* $OUT/run90/
for r in 1 2; do for b in old new; do echo "== $b round $r"
  SORT_CELLS=uniform:10485760 timeout 100 $B/sc_$b 2 1 2 4 8 16 | tail -n +2
done; done > $R/cells.txt 2>&1
cp $R/* $OUT/run90/
cat $R/cells.txt
