#!/bin/bash
# Run 76 on the 16-core host: binaries built from a7c2ab1 (the sort timed on owned arrays,
# `sort_vecs`). First the frame-coherent sort cells with ours on owned arrays and on slices
# side by side (sort_cells, 3 rounds), then the full report (every stage but Tracy's), then
# the demo's digests. Everything lands in /tmp/r76, tarred into $OUT.
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
B=.bench/bin; R=/tmp/r76; mkdir -p $R
lscpu > $R/machine.txt 2>&1
SORT_CELLS=frame timeout 120 $B/sort_cells 3 1 2 4 8 16 > $R/cells.txt 2>&1
SORT_CELLS=frame:10000000 timeout 120 $B/sort_cells 3 16 | tail -1 >> $R/cells.txt 2>&1
cat $R/cells.txt
start=$(date +%s); timeout 420 $B/switchyard-bench-report --out $R/full > $R/report-stdout.txt 2> $R/report-stderr.txt; echo "report rc=$? in $(( $(date +%s) - start )) s" >> $R/report-stdout.txt
{ for t in 1 4 16; do echo "null default t$t $(timeout 60 $B/switchyard-demo --backend null --frames 3 --digest --threads $t | grep digest | md5sum)"; done
  for t in 1 16; do echo "wgpu default t$t $(timeout 60 $B/switchyard-demo --frames 3 --digest --threads $t | grep digest | md5sum)"; done
  for t in 1 16; do echo "null 1M t$t $(timeout 60 $B/switchyard-demo --backend null --objects 1000000 --frames 3 --digest --threads $t | grep digest | md5sum)"; done; } > $R/digests.txt 2>&1
tar czf $OUT/run76.tgz -C $R .
cat $R/digests.txt; tail -3 $R/report-stdout.txt; grep -E "scaling|met" $R/report-stdout.txt | tail -5
