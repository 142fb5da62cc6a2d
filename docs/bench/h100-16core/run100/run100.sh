#!/bin/bash
# Run 100 on the 16-core host: three binaries alternating, three rounds: the head de7ffaf
# ("base"), it with run 99's change (a sort input of at most 8k objects written on the
# sorting worker alone, "serial"), and that with the transparent pass culled in the
# opaque pass's parallel pass over the objects ("fold"): the demo (city, full graph, null
# backend, 120 frames) at 100k objects on 8 and 16 threads and 1M on 16 and 1 (median
# frame, cull and sort stage ms). Then Tracy captures of the fold binary's demo at 1M
# objects on 16 threads and 100k on 16 and 8: every event.
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/b && tar xJf .bench/bins.tar.xz -C /tmp/b
B=/tmp/b/bin; T=/tmp/b/tracy; R=/tmp/r100; mkdir -p $R
lscpu > $R/machine.txt 2>&1
{
for round in 1 2 3; do
  for ot in 100000:16 100000:8 1000000:16 1000000:1; do
    o=${ot%:*}; t=${ot#*:}
    for b in base serial fold; do
      out=$(timeout 60 $B/demo-$b --backend null --objects $o --frames 120 --threads $t 2>&1)
      f=$(echo "$out" | grep "^| frame (cpu)" | awk -F'|' '{print $4}')
      c=$(echo "$out" | grep "^| cull " | awk -F'|' '{print $4}')
      s=$(echo "$out" | grep "^| sort " | awk -F'|' '{print $4}')
      echo "round $round demo-$b objects $o threads $t frame $f cull $c sort $s"
    done
  done
done
} > $R/ab.txt 2>&1
cat $R/ab.txt
for ot in 1000000:16 100000:16 100000:8; do
  o=${ot%:*}; t=${ot#*:}
  $T/capture -o /tmp/c.tracy -a 127.0.0.1 -f > $R/cap-$o-$t.log 2>&1 &
  sleep 1
  TRACY_NO_EXIT=1 timeout 100 $B/demo-tracy --backend null --objects $o --threads $t --frames 200 \
    --wait-for-profiler 30 > $R/demo-tracy-$o-$t.txt 2>&1
  wait
  $T/csvexport -u /tmp/c.tracy | gzip > $R/events-$o-$t.csv.gz
done
cp $R/* $OUT/ 2>/dev/null
