#!/bin/bash
# Run 118 on the 16-core host: the full report at 6f91562 (whose library code is
# a2b2e45's; binaries built from that tree, stripped, in .bench/r118), then the demo's
# digests (null 1/4/16 threads, Vulkan 1/16, 1M objects null 1/16). Everything lands in
# /tmp/r118, tarred into $OUT.
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
B=.bench/r118; R=/tmp/r118; mkdir -p $R
lscpu > $R/machine.txt 2>&1
start=$(date +%s); timeout 450 $B/switchyard-bench-report --out $R/full > $R/report-stdout.txt 2> $R/report-stderr.txt; echo "report rc=$? in $(( $(date +%s) - start )) s" >> $R/report-stdout.txt
{ for t in 1 4 16; do echo "null default t$t $(timeout 60 $B/switchyard-demo --backend null --frames 3 --digest --threads $t | grep digest | md5sum)"; done
  for t in 1 16; do echo "wgpu default t$t $(timeout 60 $B/switchyard-demo --frames 3 --digest --threads $t | grep digest | md5sum)"; done
  for t in 1 16; do echo "null 1M t$t $(timeout 60 $B/switchyard-demo --backend null --objects 1000000 --frames 3 --digest --threads $t | grep digest | md5sum)"; done; } > $R/digests.txt 2>&1
tar czf $OUT/run118.tgz -C $R .
cp $R/full/report.md $OUT/report.md
cat $R/digests.txt; tail -3 $R/report-stdout.txt; grep -E "scaling|utilization" $R/report-stdout.txt
