#!/bin/bash
# Run 114 on the 16-core host: each cull's parts as they ran (part-log.diff, a probe on
# a38970d: with PART_LOG set, one line per cull: its wall time and each part's start
# after the cull began, its time and its worker, ns). The demo at 100k and 1M objects on
# 1, 8 and 16 threads, 300 frames each: the parts' summed time against one thread (the
# cull's work inflation) and what the view's last parts wait on. Then Tracy captures of
# the head with labelled pieces (each piece's `work` zone names its job; "label", built
# from a38970d with busy::timed_as): 1M objects on 16 threads and on one, 100k on 16.
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/p && tar xJf .bench/p.tar.xz -C /tmp/p
B=/tmp/p/bin; T=/tmp/p/tracy
lscpu > /tmp/machine.txt
for o in 100000 1000000; do for t in 1 8 16; do
  PART_LOG=1 $B/demo-partlog --backend null --objects $o --threads $t --frames 300 2> /tmp/log-$o-$t.txt > /tmp/demo-$o-$t.txt
  grep -h "critical\|^| cull\|frame (cpu)" /tmp/demo-$o-$t.txt | sed "s/^/$o $t: /" | cut -c1-250
done; done
for c in 1000000:16 1000000:1 100000:16; do
  o=${c%:*}; t=${c#*:}
  $T/capture -o /tmp/c.tracy -a 127.0.0.1 -f > /tmp/cap-$o-$t.log 2>&1 &
  sleep 1
  TRACY_NO_EXIT=1 timeout 90 $B/demo-tracy-label --backend null --objects $o --threads $t --frames 120 \
    --wait-for-profiler 30 > /tmp/demo-tracy-$o-$t.txt 2>&1
  wait
  $T/csvexport -u /tmp/c.tracy | gzip > $OUT/events-label-$o-$t.csv.gz
  rm -f /tmp/c.tracy
done
cd /tmp && tar czf $OUT/parts.tar.gz machine.txt log-*.txt demo-*.txt
ls -la $OUT
