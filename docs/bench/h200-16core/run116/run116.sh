#!/bin/bash
# Run 116 on the 16-core host (an H200 loan): the sort's tail (the pairs whose keys changed, sorted on
# one thread below the sorter's parallel threshold of 16k pairs) sorted by the parallel
# paths from 1k or 2k pairs (a probe, tail-parallel.diff on 0131b2c: TAIL_PAR_MIN sets
# the tail sorter's threshold; "tp1k", "tp2k" against "base", one binary). Paired, eight
# alternating rounds of 600 frames; digests at 1 and 16 threads.
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/r && tar xJf .bench/r.tar.xz -C /tmp/r
B=/tmp/r/bin
for b in base tp1k tp2k; do for t in 1 16; do echo "$b $t $($B/demo-$b --backend null --digest --frames 3 --threads $t | grep digest | md5sum)"; done; done | tee $OUT/digests.txt
docs/bench/tools/ab_demo.sh 8 600 "100000:16 1000000:16 100000:8" $B base tp1k tp2k > $OUT/ab.txt 2>&1
for n in tp1k tp2k; do echo "== $n"; python3 docs/bench/tools/paired_ratios.py $OUT/ab.txt demo-base demo-$n; done | tee $OUT/ratios.txt
