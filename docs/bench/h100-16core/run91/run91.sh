#!/bin/bash
# Run 91 on the 16-core H100: the demo's frame (null backend, city, full graph) with three
# binaries alternating, three rounds: d1d032e (before), 280f9df (one frustum test per
# camera), the fine cull blocks on top; 100k and 1M objects on 1, 4 and 16 threads. Prints
# each run's median "frame (cpu)" and "cull" rows (ms; median over 60 frames as the demo
# prints them). Then the demo's digests with the last binary.
cd "$(dirname "$0")/../../../.."
B=.bench/bin; R=/tmp/r91; mkdir -p $R
lscpu > $R/machine.txt 2>&1
{
for round in 1 2 3; do
  for o in 100000 1000000; do
    for t in 1 4 16; do
      for b in demo-old demo-new demo-fine; do
        out=$(timeout 60 $B/$b --backend null --objects $o --frames 60 --threads $t 2>&1)
        f=$(echo "$out" | grep "^| frame (cpu)" | awk -F'|' '{print $4}')
        c=$(echo "$out" | grep "^| cull " | awk -F'|' '{print $4}')
        echo "round $round objects $o threads $t $b frame $f cull $c"
      done
    done
  done
done
} > $R/ab.txt 2>&1
{ for t in 1 4 16; do echo "null default t$t $(timeout 60 $B/demo-fine --backend null --frames 3 --digest --threads $t | grep digest | md5sum)"; done
  for t in 1 16; do echo "null 1M t$t $(timeout 60 $B/demo-fine --backend null --objects 1000000 --frames 3 --digest --threads $t | grep digest | md5sum)"; done; } > $R/digests.txt 2>&1
tar czf $OUT/run91.tgz -C $R .
cat $R/ab.txt $R/digests.txt
