#!/bin/bash
# Run 85: the packed prefix sort (new) and packed LSD (new2) against the head (old).
cd "$(dirname "$0")/bin"
for r in 1 2; do for b in old new new2; do echo "== $b round $r"; SORT_CELLS=uniform,render ./sort_cells_$b 5 1 2 4 16; done; done
for r in 1 2; do for b in old new2; do echo "== $b 10M round $r"; SORT_CELLS=uniform:10485760 ./sort_cells_$b 3 1 2 4 8 | grep -v " 16384\| 65536\| 262144\| 1048576 "; done; done
