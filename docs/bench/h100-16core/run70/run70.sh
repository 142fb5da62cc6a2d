#!/bin/bash
# Run 70: keys compared only where the view did not move (d533d51, "cmp") against still
# views keeping their queues as first landed (d26825e, "new") and their parent (46d9b1b,
# "old"): frame_spans in three rounds, each round's order rotated (100k objects at 1 and
# 16 threads, 1M at 16); the report's frame rows of each, rotated likewise; then the sort
# cells of 16k and 64k render-shaped pairs at d533d51 (one-thread sorts of 4k-16k pairs on
# 11-bit digits).
nproc; lscpu | grep -E "Model name|Thread"
builds=(old new cmp)
for r in 0 1 2; do
  for i in 0 1 2; do
    b=${builds[$(( (r + i) % 3 ))]}
    for a in "100000 1" "100000 16" "1000000 16"; do
      echo "== round $((r + 1)) $b $a"; .bench/bin/fs_$b $a 300
    done
  done
done
for r in 0 1 2; do
  for i in 0 1 2; do
    b=${builds[$(( (r + i) % 3 ))]}
    echo "== report frame rows, round $((r + 1)) $b"
    .bench/bin/report_$b --only frame --no-gpu --out /tmp/r70-$r-$b > /tmp/r70-$r-$b.txt 2>&1
    echo "report rc=$?"; grep -E "^\| frame scaling" /tmp/r70-$r-$b.txt
  done
done
echo "== sort cells"
SORT_CELLS=render:16384,render:65536 .bench/bin/sort_cells 9 1 2 4 8 16
