#!/bin/bash
# Run 71 (first version of the merged runs, after a parallel survey of the whole input): the sort of small evenly spread inputs on 4+ threads as runs merged in parallel
# (kernels/src/sort/runs.rs, "runs") against the sorter before it (6cd3c68, "old"): the
# report's 16k uniform cells in three rounds, the order alternating; then run 70's probe
# (run70/merged_runs.rs.txt, then an example) with the new sorter as `ours`.
nproc; lscpu | grep -E "Model name|Thread"
builds=(old runs)
for r in 0 1 2; do
  for i in 0 1; do
    b=${builds[$(( (r + i) % 2 ))]}
    echo "== round $((r + 1)) $b"
    SORT_CELLS=uniform:16384 .bench/bin/sort_cells_$b 9 1 2 4 8 16
  done
done
echo "== merged_runs probe, runs build"
.bench/bin/merged_runs 4 8 16
