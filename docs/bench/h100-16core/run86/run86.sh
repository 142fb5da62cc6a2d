#!/bin/bash
# Run 86: sort_vecs leaving the radix sort's result in the scratch (new) against 43ca839 (old).
cd "$(dirname "$0")/bin"
for r in 1 2; do for b in old new; do echo "== $b round $r"
  SORT_CELLS=uniform:10485760 ./sc_$b 2 1 2 4 | tail -n +2
  SORT_CELLS=uniform:1048576,render:1048576 ./sc_$b 3 1 2 16 | tail -n +2
done; done
