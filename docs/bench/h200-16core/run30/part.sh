#!/bin/bash
# Cull parts of 4k objects instead of 16k: the report's frame rows, old vs new, alternating.
cd "$(dirname "$0")/.."
L=$OUT; mkdir -p $L
for round in ${ROUNDS:-1 2 3}; do
  for b in report-old report-new; do
    s=$(date +%s)
    timeout 170 .bench/bin/$b --no-gpu --only frame --out /tmp/r-$b-$round > $L/$b-r$round.txt 2>&1
    echo "$b r$round rc=$? $(( $(date +%s) - s ))s" >> $L/rc.txt
  done
done
grep -h -E "^\| (frame|utilization)" $L/report-*-r*.txt | head -0
for f in $L/report-*-r*.txt; do echo "== $f"; grep -E "^\| frame, null|^\| frame scaling|^- (100|1000)k objects, 16" $f; done > $L/summary.txt
