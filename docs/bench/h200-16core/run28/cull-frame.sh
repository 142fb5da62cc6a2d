#!/bin/bash
# Frustum of up to 12 planes: the report's cull and frame rows, old (b7979b7) vs new, alternating.
cd "$(dirname "$0")/.."
L=$OUT; mkdir -p $L
for round in 1 2; do
  for b in report report-new; do
    s=$(date +%s)
    timeout 280 .bench/bin/$b --no-gpu --only cull,frame --out /tmp/r-$b-$round > $L/$b-r$round.txt 2>&1
    echo "$b r$round rc=$? $(( $(date +%s) - s ))s" >> $L/rc.txt
  done
done
