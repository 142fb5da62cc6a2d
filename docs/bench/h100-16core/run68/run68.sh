#!/bin/bash
# Run 68: still views keep their queues (d26825e, "new") against its parent (46d9b1b, "old"),
# frame_spans in four rotating rounds (100k objects at 1 and 16 threads, 1M at 16), then the
# report's frame rows of each build, alternating, four times.
nproc; lscpu | grep -E "Model name|Thread"
for r in 1 2 3 4; do
  for b in old new; do
    for a in "100000 1" "100000 16" "1000000 16"; do
      echo "== round $r $b $a"; .bench/bin/fs_$b $a 300
    done
  done
done
for r in 1 2 3 4; do
  for b in old new; do
    echo "== report frame rows, round $r $b"
    start=$(date +%s); .bench/bin/report_$b --only frame --no-gpu --out /tmp/r68-$r-$b > /tmp/r68-$r-$b.txt 2>&1
    echo "report rc=$? in $(( $(date +%s) - start )) s"; grep -E "^\| (frame|utilization)|^- " /tmp/r68-$r-$b.txt
  done
done
