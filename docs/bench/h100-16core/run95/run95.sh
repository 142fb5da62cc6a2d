#!/bin/bash
# Run 95 on the 16-core host: where the demo's 16-thread frame spends its time.
# 1. Tracy captures of the demo (city, full graph, null backend, 16 threads) at 1M and
#    100k objects, built with --features tracy with the nearly-sorted path merging by
#    (key, object) and its zones (widen-gaps, set-aside, merge): per-zone statistics and
#    every event.
# 2. The demo's frame alternating three binaries, two rounds: the cull's fine blocks
#    always (50158eb, run 94's question), the split flag (8311c03), and the merge by
#    (key, object) (the working tree): 1M objects on 1 and 16 threads, 100k on 16.
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/b && tar xJf .bench/bins.tar.xz -C /tmp/b
B=/tmp/b/bin; T=/tmp/b/tracy; R=/tmp/r95; mkdir -p $R
lscpu > $R/machine.txt 2>&1
for o in 1000000 100000; do
  $T/capture -o /tmp/c$o.tracy -a 127.0.0.1 -f > $R/cap$o.log 2>&1 &
  sleep 1
  TRACY_NO_EXIT=1 timeout 100 $B/demo-tracy --backend null --objects $o --threads 16 --frames 200 \
    --wait-for-profiler 30 > $R/demo-tracy-$o.txt 2>&1
  wait
  $T/csvexport /tmp/c$o.tracy > $R/zones-$o.csv
  $T/csvexport -u /tmp/c$o.tracy | gzip > $R/events-$o.csv.gz
done
{
for round in 1 2; do
  for ot in 1000000:1 1000000:16 100000:16; do
    o=${ot%:*}; t=${ot#*:}
    for b in fine split new; do
      out=$(timeout 60 $B/demo-$b --backend null --objects $o --frames 120 --threads $t 2>&1)
      f=$(echo "$out" | grep "^| frame (cpu)" | awk -F'|' '{print $4}')
      c=$(echo "$out" | grep "^| cull " | awk -F'|' '{print $4}')
      s=$(echo "$out" | grep "^| sort " | awk -F'|' '{print $4}')
      echo "round $round demo-$b objects $o threads $t frame $f cull $c sort $s"
    done
  done
done
} > $R/ab.txt 2>&1
cp $R/* $OUT/ 2>/dev/null
cat $R/ab.txt; for o in 1000000 100000; do grep -E "^(frame|cull|sort|sort-keys|radix-sort|widen-gaps|set-aside|merge|batch|record|patch|globals|gather|dirty-transforms),"  $R/zones-$o.csv | cut -d, -f1,4-9; done
