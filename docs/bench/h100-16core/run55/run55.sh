#!/bin/bash
# Run 55: for_each_index's caller spinning until its helpers have left (kernels/src/par.rs,
# Claim::fork) before it unwinds its joins, against the binary before (rayon's join then
# waits for a stolen half by running other jobs): frame_spans built both ways, 100k and 1M
# objects on 16 and 8 threads, four rotating rounds; the median frame's header, its
# critical jobs (sort, batch, record of each view).
cd "$(dirname "$0")/../../../.."
for round in 1 2 3 4; do
  if [ $((round % 2)) = 1 ]; then order="base spin"; else order="spin base"; fi
  for b in $order; do
    for n in 100000 1000000; do
      for t in 16 8; do
        echo "== $b round $round"
        .bench/bin/spans-$b $n $t 300 | grep -E "objects|sort\[|record\[main"
      done
    done
  done
done
