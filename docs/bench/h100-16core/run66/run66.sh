#!/bin/bash
# Run 66: the coherent sort input's key gather with the keys' lines asked for a block ahead
# ("pref": a prefetch per object in the marks loop of coherent_order) against without
# ("ties": 78653f9), both with run 65's phase probe (not kept; "pref" lacks the probe's
# merge phases), frame_spans, four rotating rounds: 100k objects at 1 and 16 threads, 1M at 16;
nproc; lscpu | grep -E "Model name|Thread"
for r in 1 2 3 4; do
  for b in ties pref; do
    for a in "100000 1" "100000 16" "1000000 16"; do
      echo "== round $r $b $a"; .bench/bin/fs_$b $a 300
    done
  done
done
# Then the report's frame rows at 78653f9 (the binary built from that tree), twice.
for r in 1 2; do
  echo "== report frame rows, run $r"
  start=$(date +%s); .bench/bin/switchyard-bench-report --only frame --no-gpu --out /tmp/r66-$r > /tmp/r66-$r.txt 2>&1
  echo "report rc=$? in $(( $(date +%s) - start )) s"; grep -E "^\| (frame|utilization)|^- " /tmp/r66-$r.txt
done
