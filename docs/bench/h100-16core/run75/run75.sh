#!/bin/bash
# Run 75: the nearly sorted inputs merged runs take between the sizes runs 72 and 74
# measured: 128k frame-coherent pairs on 8 threads (the 16k-a-thread limit) and 128k and
# 192k on 16, "head" (0105902 and sort_cells taking sizes from SORT_CELLS) against
# "nonearly" (the same with NEARLY_RUNS_MIN_THREADS out of reach: the nearly-sorted path as
# before), two rounds, the order alternating.
nproc; lscpu | grep -E "Model name|Thread"
builds=(head nonearly)
for r in 0 1; do
  for i in 0 1; do
    b=${builds[$(( (r + i) % 2 ))]}
    echo "== round $((r + 1)) $b"
    SORT_CELLS=frame:131072,frame:196608 .bench/bin/sort_cells_$b 9 8 16
  done
done
