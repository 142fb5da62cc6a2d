#!/bin/bash
# Written in session 36 (no device time was left then); run in session 37, with run 70's probe
# (run70/merged_runs.rs.txt, then an example) after it: see RUNS.md.
# Run 70: views culled from the last frame's inputs keeping their cull, sort and batch
# outputs, with keys compared only where the view did not move (ef4bc1b, "keep"), against
# the parent of still views keeping their queues (46d9b1b, "old"): frame_spans in two
# rounds, the order alternating (100k objects at 1 and 16 threads, 1M at 16);
# the report's frame rows of each, rotated likewise; then the sort cells of 16k and 64k
# render-shaped pairs at ef4bc1b (one-thread sorts of 4k-16k pairs on 11-bit digits).
nproc; lscpu | grep -E "Model name|Thread"
builds=(old keep)
for r in 0 1; do
  for i in 0 1; do
    b=${builds[$(( (r + i) % 2 ))]}
    for a in "100000 1" "100000 16" "1000000 16"; do
      echo "== round $((r + 1)) $b $a"; .bench/bin/fs_$b $a 200
    done
  done
done
for r in 0 1; do
  for i in 0 1; do
    b=${builds[$(( (r + i) % 2 ))]}
    echo "== report frame rows, round $((r + 1)) $b"
    .bench/bin/report_$b --only frame --no-gpu --out /tmp/r70-$r-$b > /tmp/r70-$r-$b.txt 2>&1
    echo "report rc=$?"; grep -E "^\| frame" /tmp/r70-$r-$b.txt
  done
done
echo "== sort cells"
SORT_CELLS=render:16384,render:65536 .bench/bin/sort_cells 9 1 2 4 8 16
