#!/bin/bash
# Run 119 on the 16-core host: the cull's queue filter (a part's objects kept by their
# material's blending and passes) compacts its list without a branch per object instead of
# Vec::retain. Binaries "base" (a2b2e45's library code) and "new" (retain.diff on it);
# digests at 1 and 16 threads, then paired alternating rounds of 600 frames, null backend
# (ROUNDS and "OBJECTS:THREADS ..." as arguments 1 and 2).
cd "$(dirname "$0")/../../../.."
B=.bench/r119
for b in base new; do for t in 1 16; do echo "$b $t $($B/demo-$b --backend null --digest --frames 3 --threads $t | grep digest | md5sum)"; done; done | tee $OUT/digests.txt
docs/bench/tools/ab_demo.sh "${1:-10}" 600 "${2:-100000:16 1000000:16 100000:1 1000000:1}" $B base new > $OUT/ab.txt 2>&1
{ python3 docs/bench/tools/paired_ratios.py $OUT/ab.txt demo-base demo-new
  echo "minimums:"; python3 docs/bench/tools/paired_ratios.py $OUT/ab.txt demo-base demo-new min; } | tee $OUT/ratios.txt
