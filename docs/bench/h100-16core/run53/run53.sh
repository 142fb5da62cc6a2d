#!/bin/bash
# Run 53: the coherent sort input's fill run in order on the sorting thread below a size
# (scheduler/src/sort/coherent.rs PARALLEL_MIN): frame_spans built with 0 (always
# forked, as before), 16k and 48k objects, three alternating rounds, 100k and 1M objects
# on 16 and 8 threads; the median frame's header and its sort jobs.
cd "$(dirname "$0")/../../../.."
for round in 1 2 3; do
  case $round in 1) order="0 16k 48k";; 2) order="16k 48k 0";; 3) order="48k 0 16k";; esac
  for b in $order; do
    for n in 100000 1000000; do
      for t in 16 8; do
        echo "== $b round $round"
        .bench/bin/spans-$b $n $t 300 | grep -E "objects|sort\["
      done
    done
  done
done
