#!/bin/bash
# Run 101 on the 16-core host: the machine's memory read bandwidth (the report's
# bandwidth rows), then Tracy captures of the demo (city, full graph, null backend, 200
# frames, 16 threads) at 1M and 100k objects with de7ffaf ("base": the transparent pass
# culled in a job of its own after the opaque pass's) and with 6f0a148 ("fold": culled in
# the opaque pass's parallel pass), alternating: every event.
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/b && tar xJf .bench/bins.tar.xz -C /tmp/b
B=/tmp/b/bin; T=/tmp/b/tracy; R=/tmp/r101; mkdir -p $R
lscpu > $R/machine.txt 2>&1
$B/switchyard-bench-report --no-gpu --only bandwidth --out $R/report > $R/report.log 2>&1
for o in 1000000 100000; do
  for b in base fold; do
    $T/capture -o /tmp/c.tracy -a 127.0.0.1 -f > $R/cap-$b-$o.log 2>&1 &
    sleep 1
    TRACY_NO_EXIT=1 timeout 100 $B/demo-tracy-$b --backend null --objects $o --threads 16 --frames 200 \
      --wait-for-profiler 30 > $R/demo-$b-$o.txt 2>&1
    wait
    $T/csvexport -u /tmp/c.tracy | gzip > $R/events-$b-$o.csv.gz
  done
done
cd $R && tar cf $OUT/r101.tar .
