#!/bin/bash
# Run 74: merged runs past their limits (a probe). "head" is the sorter of 4ff3225
# (module `runs` up to 32k evenly spread pairs on 4+ threads and 64k nearly sorted ones
# on 8+); "big" is the same tree with RUNS_MAX 64k and NEARLY_RUNS_MAX 1M (runs then
# stay below 16k pairs: 17 runs at 256k, 65 at 1M, merged pairwise). The report's cells
# (`sort_cells`, 9 rounds) for 64k uniform and 256k and 1M frame-coherent pairs, two
# rounds, the order alternating.
nproc; lscpu | grep -E "Model name|Thread"
builds=(head big)
for r in 0 1; do
  for i in 0 1; do
    b=${builds[$(( (r + i) % 2 ))]}
    echo "== round $((r + 1)) $b"
    SORT_CELLS=uniform:65536,frame:262144,frame:1048576 .bench/bin/sort_cells_$b 9 4 8 16
  done
done
