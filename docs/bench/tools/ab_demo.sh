#!/bin/bash
# Paired A/B rounds of the demo (city, full graph, null backend):
#   ab_demo.sh ROUNDS FRAMES "OBJECTS:THREADS ..." BINDIR NAME...
# runs BINDIR/demo-NAME for every NAME in turn, per configuration, per round, and prints
# one line each: "round R demo-NAME objects O threads T frame F cull C sort S" (the
# medians of the demo's stage table, ms), the input of paired_ratios.py.
rounds=$1 frames=$2 configs=$3 bins=$4
shift 4
for round in $(seq 1 "$rounds"); do
  for ot in $configs; do
    o=${ot%:*}; t=${ot#*:}
    for b in "$@"; do
      out=$(timeout 60 "$bins/demo-$b" --backend null --objects "$o" --frames "$frames" --threads "$t" 2>&1)
      f=$(echo "$out" | grep "^| frame (cpu)" | awk -F'|' '{print $4}')
      c=$(echo "$out" | grep "^| cull " | awk -F'|' '{print $4}')
      s=$(echo "$out" | grep "^| sort " | awk -F'|' '{print $4}')
      echo "round $round demo-$b objects $o threads $t frame $f cull $c sort $s"
    done
  done
done
