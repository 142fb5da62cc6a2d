#!/bin/bash
# Run 96 on the 16-core host: the sort's input as the objects that stay (visible in both
# frames with the same key, in last frame's order and keys) followed by a tail of the new
# and moved ones (the working tree after 0a82774), against 0a82774 (the nearly-sorted path
# merging by (key, object), given gaps widened in parallel: "mid") and 8311c03 ("split").
# 1. Tracy captures of the working tree's demo (city, full graph, null backend, 16
#    threads) at 1M and 100k objects: every event.
# 2. The demo's frame, the three binaries alternating, three rounds: 1M and 100k objects
#    on 1 and 16 threads (median frame, cull and sort stage ms).
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/b && tar xJf .bench/bins.tar.xz -C /tmp/b
B=/tmp/b/bin; T=/tmp/b/tracy; R=/tmp/r96; mkdir -p $R
lscpu > $R/machine.txt 2>&1
for o in 1000000 100000; do
  $T/capture -o /tmp/c$o.tracy -a 127.0.0.1 -f > $R/cap$o.log 2>&1 &
  sleep 1
  TRACY_NO_EXIT=1 timeout 100 $B/demo-tracy --backend null --objects $o --threads 16 --frames 200 \
    --wait-for-profiler 30 > $R/demo-tracy-$o.txt 2>&1
  wait
  $T/csvexport -u /tmp/c$o.tracy | gzip > $R/events-$o.csv.gz
done
{
for round in 1 2 3; do
  for ot in 1000000:1 1000000:16 100000:1 100000:16; do
    o=${ot%:*}; t=${ot#*:}
    for b in split mid new; do
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
cat $R/ab.txt
