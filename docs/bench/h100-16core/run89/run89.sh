#!/bin/bash
# Runs 88-89 on the 16-core H100: the probe of a one-thread sort's top split at 1M and 10M
# uniform pairs (sort_probe10m.rs.txt in run88/),
# five rounds, after `lscpu` and the transparent huge pages setting.
cd "$(dirname "$0")/../../../.."
B=.bench/bin; R=/tmp/r89; mkdir -p $R
{ lscpu; cat /sys/kernel/mm/transparent_hugepage/enabled; } > $R/machine.txt 2>&1
timeout 200 $B/sort_probe10m 5 1048576 10485760 > $R/probe.txt 2>&1; echo "rc=$?" >> $R/probe.txt
mkdir -p $OUT/run89 && cp $R/* $OUT/run89/
cat $R/probe.txt
