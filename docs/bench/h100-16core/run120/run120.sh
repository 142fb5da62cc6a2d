#!/bin/bash
# Run 120 on the 16-core host (prepared in session 49, not yet run): the report's
# bandwidth and frame rows (`--only bandwidth,frame --no-gpu`: frame scaling,
# utilization, the critical path; null backend) at dd66b89 (the cut tails of run 121 in;
# binaries built from that tree, stripped: switchyard-bench-report and switchyard-demo), with the
# host's CPU; then the demo's frame at 100k and 1M objects on 1 and 16 threads and its
# digest; then Tracy captures of the demo at 100k objects on 16 and 4 threads (200
# frames; demo-tracy, the tracy feature's build, with capture and csvexport in
# .bench/r120/tracy; the folder travels as .bench/r120x/bins.tar.xz, the tree's 64 MiB
# limit) for the main view's sort phases (sort-tail, gather-tail,
# merge-last: docs/bench/tools/tracy_phases.py). Run 119's host ran the demo twice as fast on 16 threads as runs 117-118's:
# this says whether the report's scaling targets are met on such a host. Everything
# lands in /tmp/r120, tarred into $OUT. Carry [".bench/r120x"].
cd "$(dirname "$0")/../../../.."
B=/tmp/b120; R=/tmp/r120; mkdir -p $R $B
if [ -f .bench/r120x/bins.tar.xz ]; then tar xJf .bench/r120x/bins.tar.xz -C $B; else cp -r .bench/r120/. $B/; fi
lscpu > $R/machine.txt 2>&1
start=$(date +%s); timeout 240 $B/switchyard-bench-report --only bandwidth,frame --no-gpu --out $R/full > $R/report-stdout.txt 2> $R/report-stderr.txt; echo "report rc=$? in $(( $(date +%s) - start )) s" >> $R/report-stdout.txt
for o in 100000 1000000; do for t in 1 16; do timeout 60 $B/switchyard-demo --backend null --objects $o --frames 600 --threads $t > $R/demo-$o-$t.txt 2>&1; done; done
for t in 16 4; do
  $B/tracy/capture -o /tmp/c$t.tracy -a 127.0.0.1 -f > $R/cap$t.log 2>&1 &
  sleep 1
  TRACY_NO_EXIT=1 timeout 60 $B/demo-tracy --backend null --objects 100000 --threads $t --frames 200 \
    --wait-for-profiler 20 > $R/demo-tracy-$t.txt 2>&1
  wait
  $B/tracy/csvexport -u /tmp/c$t.tracy | gzip > $R/events-100k-$t.csv.gz
done
echo "null t16 $(timeout 60 $B/switchyard-demo --backend null --frames 3 --digest --threads 16 | grep digest | md5sum)" > $R/digests.txt
tar czf $OUT/run120.tgz -C $R .
cp $R/full/report.md $OUT/report.md
grep "Model name" $R/machine.txt; cat $R/digests.txt; tail -2 $R/report-stdout.txt
grep -E "scaling|utilization|p50 / p99" $R/report-stdout.txt | cut -c1-200; grep -h "^| frame (cpu)" $R/demo-*.txt
