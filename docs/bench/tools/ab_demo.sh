#!/bin/bash
# Paired A/B rounds of the demo (city, full graph, null backend):
#   ab_demo.sh ROUNDS FRAMES "OBJECTS:THREADS ..." BINDIR NAME...
# runs BINDIR/demo-NAME for every NAME in turn, per configuration, per round, and prints
# one line each: "round R demo-NAME objects O threads T frame F cull C sort S min frame F
# cull C sort S" (the medians of the demo's stage table, then its minimums, ms), the input
# of paired_ratios.py.
rounds=$1 frames=$2 configs=$3 bins=$4
shift 4
# Column $2 of the stage table's row starting "$1" in the last run's output.
col() { echo "$out" | grep "^| $1" | awk -F'|' "{print \$$2}"; }
for round in $(seq 1 "$rounds"); do
  for ot in $configs; do
    o=${ot%:*}; t=${ot#*:}
    for b in "$@"; do
      out=$(timeout 60 "$bins/demo-$b" --backend null --objects "$o" --frames "$frames" --threads "$t" 2>&1)
      echo "round $round demo-$b objects $o threads $t frame $(col 'frame (cpu)' 4) cull $(col 'cull ' 4)" \
        "sort $(col 'sort ' 4) min frame $(col 'frame (cpu)' 3) cull $(col 'cull ' 3) sort $(col 'sort ' 3)"
    done
  done
done
