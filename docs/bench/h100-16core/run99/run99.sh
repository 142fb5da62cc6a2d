#!/bin/bash
# Run 99 on the 16-core host: the sort's input of at most 8k objects (the city's
# transparent pass and far cascade) written on the sorting worker alone, against
# 9066bc1 (every input written in parallel pieces). Both binaries alternating, three
# rounds: the demo (city, full graph, null backend, 120 frames) at 100k and 1M objects
# on 16 threads, and 1M on one (median frame, sort stage ms).
cd "$(dirname "$0")/../../../.."
B=.bench/r97
for round in 1 2 3; do
  for ot in 100000:16 1000000:16 1000000:1; do
    o=${ot%:*}; t=${ot#*:}
    for b in switchyard-demo demo-serial; do
      out=$(timeout 60 $B/$b --backend null --objects $o --frames 120 --threads $t 2>&1)
      f=$(echo "$out" | grep "^| frame (cpu)" | awk -F'|' '{print $4}')
      s=$(echo "$out" | grep "^| sort " | awk -F'|' '{print $4}')
      echo "round $round $b objects $o threads $t frame $f sort $s"
    done
  done
done | tee $OUT/ab.txt
