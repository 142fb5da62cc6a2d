#!/bin/bash
# Run 105 on the 16-core host: the head 0260325 ("merge": the queue merged from last
# frame's); it with each cull part keeping its tail's keys (read while in its cache) and
# a tail of fewer than 8k pairs copied on the sorting worker alone ("tailkeys"); and that
# with the merge in one chained fill (each block marks its staying pairs, takes room
# after the blocks before it and merges: one fork instead of a counting fork and a
# merging fork, "chained"); alternating, paired, eight rounds: the demo (city, full
# graph, null backend, 600 frames) at 100k objects on 16 and 8 threads and 1M on 16 and
# 4 (median frame, cull and sort stage ms). Then Tracy captures of all three at 1M
# objects on 16 threads (tailkeys and chained add a gather-tail zone): every event.
# Binaries in .bench/bins.tar.xz (bin/, stripped; tracy/ from ../shared/tools/tracy):
# demo-merge and demo-tracy-merge built at 0260325; demo-tailkeys and demo-tracy-tailkeys
# at 0260325 with tail-keys.patch applied; demo-chained and demo-tracy-chained at
# c0c0579 (tail-keys-chained.patch, landed); the tracy ones with --features tracy.
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/b && tar xJf .bench/bins.tar.xz -C /tmp/b
B=/tmp/b/bin; T=/tmp/b/tracy; R=$OUT
lscpu > $R/machine.txt 2>&1
docs/bench/tools/ab_demo.sh 8 600 "100000:16 100000:8 1000000:16 1000000:4" $B merge tailkeys chained \
  > $R/ab.txt 2>&1
cat $R/ab.txt
for ot in 1000000:16; do
  for b in merge tailkeys chained; do
    o=${ot%:*}; t=${ot#*:}
    $T/capture -o /tmp/c.tracy -a 127.0.0.1 -f > /tmp/cap.log 2>&1 &
    sleep 1
    TRACY_NO_EXIT=1 timeout 60 $B/demo-tracy-$b --backend null --objects $o --threads $t --frames 200 \
      --wait-for-profiler 30 >> $R/demo-tracy.txt 2>&1
    wait
    $T/csvexport -u /tmp/c.tracy | gzip > $R/events-$b-$o-$t.csv.gz
  done
done
