#!/bin/bash
# Instructions and mispredicted branches of the demo (100k objects, one thread, 60 frames,
# null backend) under cachegrind, for run 121's binaries in DIR (unstripped release
# builds): cg-base (a904f15's library code), cg-final (the landed change; the cut is off
# on one thread), cg-final-cut (the same with SPLIT_MIN_THREADS = 1: tails cut, each block
# sorting its own), cg-inline-cut (that, with the tail copying inlined in the merge loop
# instead of `tail_before`). bash cachegrind.sh DIR > cachegrind.txt
for b in base final final-cut inline-cut; do
  valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes --cachegrind-out-file=/dev/null \
    "$1/cg-$b" --backend null --objects 100000 --frames 60 --threads 1 2>&1 >/dev/null |
    awk -v b="$b" '/I *refs/ {i=$4} /Mispredicts:/ {m=$3} END {print b, "instructions", i, "mispredicted", m}'
done
