#!/bin/bash
# Run 42: the report's frame rows (null backend, 100k and 1M objects, 1-16 threads, per-draw
# materials as the report pins them) at this session's head (report-new) against the
# report of session 31 (report), alternating rounds.
cd "$(dirname "$0")/../../../.."
B=.bench/bin
for r in 1 2 3 4; do
  if [ $((r % 2)) = 1 ]; then order="report report-new"; else order="report-new report"; fi
  for b in $order; do
    timeout 120 $B/$b --only frame --no-gpu --out /tmp/rep-$b-$r > $OUT/$b-r$r.txt 2>&1
    echo "$b r$r rc=$?" >> $OUT/rc.txt
  done
done
