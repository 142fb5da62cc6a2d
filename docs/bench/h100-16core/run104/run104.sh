#!/bin/bash
# Run 104 on the 16-core host: the head 0260325 ("merge": the queue merged from last
# frame's) and it with the tail of fewer than 8k pairs gathered on the sorting worker
# alone ("exp"), alternating, paired, eight rounds: the demo (city, full graph, null
# backend, 600 frames) at 100k objects on 16 and 8 threads and 1M on 16 and 4 (median
# frame, cull and sort stage ms). Then Tracy captures of both (the exp binary adds a
# gather-tail zone) at 1M and 100k objects on 16 threads: every event.
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/b && tar xJf .bench/bins.tar.xz -C /tmp/b
B=/tmp/b/bin; T=/tmp/b/tracy; R=$OUT
lscpu > $R/machine.txt 2>&1
{
for round in 1 2 3 4 5 6 7 8; do
  for ot in 100000:16 100000:8 1000000:16 1000000:4; do
    o=${ot%:*}; t=${ot#*:}
    for b in merge exp; do
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
for ot in 1000000:16 100000:16; do
  for b in merge exp; do
    o=${ot%:*}; t=${ot#*:}
    $T/capture -o /tmp/c.tracy -a 127.0.0.1 -f > /tmp/cap.log 2>&1 &
    sleep 1
    TRACY_NO_EXIT=1 timeout 60 $B/demo-tracy-$b --backend null --objects $o --threads $t --frames 200 \
      --wait-for-profiler 30 >> $R/demo-tracy.txt 2>&1
    wait
    $T/csvexport -u /tmp/c.tracy | gzip > $R/events-$b-$o-$t.csv.gz
  done
done
