#!/bin/bash
# Run 67: the report's sort cells at 78653f9 (the report binary built from that tree).
lscpu | grep -E "Model name|Thread"
start=$(date +%s); .bench/bin/switchyard-bench-report --only bandwidth,sort --no-gpu --out /tmp/r67 > $OUT/report.txt 2>&1
echo "report rc=$? in $(( $(date +%s) - start )) s" | tee -a $OUT/report.txt
