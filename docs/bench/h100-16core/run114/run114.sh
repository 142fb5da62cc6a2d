#!/bin/bash
# Run 114 on the 16-core host: each cull's parts as they ran (part-log.diff, a probe on
# a38970d: with PART_LOG set, one line per cull: its wall time and each part's start
# after the cull began, its time and its worker, ns). The demo at 100k and 1M objects on
# 1, 8 and 16 threads, 300 frames each: the parts' summed time against one thread (the
# cull's work inflation) and what the view's last parts wait on.
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/p && tar xJf .bench/p.tar.xz -C /tmp/p
B=/tmp/p/bin
for o in 100000 1000000; do for t in 1 8 16; do
  PART_LOG=1 $B/demo-partlog --backend null --objects $o --threads $t --frames 300 2> /tmp/log-$o-$t.txt > /tmp/demo-$o-$t.txt
  grep -h "critical\|^| cull\|frame (cpu)" /tmp/demo-$o-$t.txt | sed "s/^/$o $t: /"
done; done
cd /tmp && tar czf $OUT/parts.tar.gz log-*.txt demo-*.txt
ls -la $OUT
