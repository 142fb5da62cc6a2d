#!/bin/bash
cd "$(dirname "$0")/.."
for t in 1 16; do SY_PHASES=1 .bench/bin/probe-inst spans 100000 $t 2>&1 | grep sortmain | tail -30 > $OUT/phases-$t.txt; done
for t in 16; do SY_PHASES=1 .bench/bin/probe-inst spans 1000000 $t 2>&1 | grep sortmain | tail -30 > $OUT/phases-1m-$t.txt; done
