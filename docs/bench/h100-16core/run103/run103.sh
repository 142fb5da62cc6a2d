#!/bin/bash
# Run 103 on the 16-core host: the head 639e85b ("base") and it with the queue merged
# straight from last frame's ("merge", run 102's change as landed), alternating, paired,
# eight rounds: the demo (city, full graph, null backend, 600 frames) at 100k objects on
# 16 and 8 threads and 1M on 16, 4 and 1 (median frame, cull and sort stage ms). Then a
# Tracy capture of the merge binary's demo at 1M objects on 16 threads: every event.
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/b && tar xJf .bench/bins.tar.xz -C /tmp/b
B=/tmp/b/bin; T=/tmp/b/tracy; R=$OUT
lscpu > $R/machine.txt 2>&1
{
for round in 1 2 3 4 5 6 7 8; do
  for ot in 100000:16 100000:8 1000000:16 1000000:4 1000000:1; do
    o=${ot%:*}; t=${ot#*:}
    for b in base merge; do
      out=$(timeout 60 $B/demo-$b --backend null --objects $o --frames 600 --threads $t 2>&1)
      f=$(echo "$out" | grep "^| frame (cpu)" | awk -F'|' '{print $4}')
      c=$(echo "$out" | grep "^| cull " | awk -F'|' '{print $4}')
      s=$(echo "$out" | grep "^| sort " | awk -F'|' '{print $4}')
      echo "round $round demo-$b objects $o threads $t frame $f cull $c sort $s"
    done
  done
done
} > $R/ab.txt 2>&1
cat $R/ab.txt
for ot in 1000000:16; do
  o=${ot%:*}; t=${ot#*:}
  $T/capture -o /tmp/c.tracy -a 127.0.0.1 -f > $R/cap-$o-$t.log 2>&1 &
  sleep 1
  TRACY_NO_EXIT=1 timeout 60 $B/demo-tracy --backend null --objects $o --threads $t --frames 200 \
    --wait-for-profiler 30 > $R/demo-tracy-$o-$t.txt 2>&1
  wait
  $T/csvexport -u /tmp/c.tracy | gzip > $R/events-$o-$t.csv.gz
done

