#!/bin/bash
# Run 73: the report's sort cells with module `runs` (merged runs for small evenly spread
# and nearly sorted inputs; the report binary built from that tree), as run 67 did for
# 78653f9: every cell, the reused sorter and a fresh one.
lscpu | grep -E "Model name|Thread"
start=$(date +%s); .bench/bin/report_runs3 --only bandwidth,sort --no-gpu --out /tmp/r73 > $OUT/report.txt 2>&1
echo "report rc=$? in $(( $(date +%s) - start )) s" | tee -a $OUT/report.txt
