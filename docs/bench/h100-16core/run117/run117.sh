#!/bin/bash
# Run 117 on the 16-core host: the report's bandwidth and frame rows at 509c035 (binaries
# built from that tree; `--only bandwidth,frame --no-gpu`: the frame scaling, utilization
# and critical-path rows, null backend), then the demo's digests on the null backend at
# 1/4/16 threads. Everything lands in /tmp/r117, tarred into $OUT.
cd "$(dirname "$0")/../../../.."
B=.bench/bin; R=/tmp/r117; mkdir -p $R
lscpu > $R/machine.txt 2>&1
start=$(date +%s); timeout 200 $B/switchyard-bench-report --only bandwidth,frame --no-gpu --out $R/full > $R/report-stdout.txt 2> $R/report-stderr.txt; echo "report rc=$? in $(( $(date +%s) - start )) s" >> $R/report-stdout.txt
{ for t in 1 4 16; do echo "null default t$t $(timeout 60 $B/switchyard-demo --backend null --frames 3 --digest --threads $t | grep digest | md5sum)"; done; } > $R/digests.txt 2>&1
tar czf $OUT/run117.tgz -C $R .
cat $R/digests.txt; tail -3 $R/report-stdout.txt; grep -E "scaling|utilization" $R/report-stdout.txt
