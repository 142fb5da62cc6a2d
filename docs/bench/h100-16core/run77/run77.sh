#!/bin/bash
# Run 77: why a fresh sorter per call trails the reused one on the 16-core host (run 76:
# 256k coherent pairs on 16 threads 40.4 against 341.9 Mkeys/s; 2-core machine: level).
# sort_cells (a7c2ab1 + the fresh column) on the cells where run 76's gap was largest, with
# glibc's defaults and then with its mmap and trim thresholds out of reach (freed scratch
# stays mapped: no munmap, no page faults on the next call), alternating, two rounds.
cd "$(dirname "$0")/../../../.."
lscpu | grep -E "Model name|^CPU\(s\)"; uname -r; ldd --version | head -1
C="uniform:262144,uniform:65536,frame:65536,frame:262144,frame:16384"
for r in 1 2; do
  echo "== round $r: glibc defaults"; SORT_CELLS=$C .bench/bin/sort_cells 3 1 16
  echo "== round $r: MALLOC_MMAP_THRESHOLD_/MALLOC_TRIM_THRESHOLD_ = 1 GB"
  MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=1073741824 SORT_CELLS=$C .bench/bin/sort_cells 3 1 16
done
