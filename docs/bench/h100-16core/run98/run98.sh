#!/bin/bash
# Run 98 on the 16-core host: fewer, larger pieces for the frame's sorts (the input's
# blocks of last frame's queue at least 4k pairs instead of 1k, merge segments at least
# 4k pairs instead of one per worker) against 9066bc1, after run 97 found the 100k frame
# slower on 16 threads than on 8 (sort[main] 0.14 against 0.08 ms). Both binaries
# alternating, three rounds: the demo (city, full graph, null backend, 120 frames) at
# 100k and 1M objects on 8 and 16 threads (median frame, sort stage ms).
cd "$(dirname "$0")/../../../.."
B=.bench/r97
for round in 1 2 3; do
  for ot in 100000:8 100000:16 1000000:8 1000000:16; do
    o=${ot%:*}; t=${ot#*:}
    for b in switchyard-demo demo-cap; do
      out=$(timeout 60 $B/$b --backend null --objects $o --frames 120 --threads $t 2>&1)
      f=$(echo "$out" | grep "^| frame (cpu)" | awk -F'|' '{print $4}')
      s=$(echo "$out" | grep "^| sort " | awk -F'|' '{print $4}')
      echo "round $round $b objects $o threads $t frame $f sort $s"
    done
  done
done | tee $OUT/ab.txt
