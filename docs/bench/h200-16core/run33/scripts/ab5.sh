#!/bin/bash
# ab4 (probe summary A/B alternating) then spans of each at 100k/16t.
cd "$(dirname "$0")/.."
.bench/ab4.sh
for b in ${A:-old} ${B:-new}; do .bench/bin/probe-$b spans 100000 16 > $OUT/spans-$b.txt; done
