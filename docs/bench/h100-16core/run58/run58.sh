#!/bin/bash
# Run 58: setup without worker wake-ups (718022a) against its parent (before), and a probe:
# the shadow views' culls in parts sized for a quarter (or a sixteenth) of the workers
# (PROBE_SHADOW_DIV, a patch not kept), so the main view's cull takes more of the pool.
# frame_spans (benches/examples/frame_spans.rs), city on the null backend, 3 views, 300 frames.
lscpu | grep -E "^(Model name|Thread|Core|Socket|CPU\(s\)|L2|L3)"
run() { echo "== $1 $2 $3 div=${4:-1}"; PROBE_SHADOW_DIV=${4:-1} .bench/bin/fs-$1 $2 $3 300 | grep -E "objects|cull\[main\]|sort\[main\]|record\[main\]"; }
for round in 1 2 3 4; do
  for n in 100000 1000000; do
    run before $n 16; run after $n 16; run after $n 16 4; run after $n 16 16
  done
  run before 100000 1; run after 100000 1
done
run before 1000000 1; run after 1000000 1
