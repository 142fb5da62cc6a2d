#!/bin/bash
cd "$(dirname "$0")/.."
.bench/ab5.sh
for t in 1 4 16; do SY_PHASES=1 .bench/bin/probe-inst spans 100000 $t 2>&1 | grep sortmain | tail -20 > $OUT/phases-$t.txt; done
