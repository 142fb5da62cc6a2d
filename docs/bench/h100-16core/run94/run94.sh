#!/bin/bash
# Run 94 on the 16-core H100: the cull's fine blocks always (50158eb) against fine blocks
# only where a block's are much tighter than it (the split flag), alternating, two
# rounds: the report's cull rows (shuffled and sorted objects) and the demo's frame (the
# city, null backend, 1M objects, 1 and 16 threads; median frame and cull ms).
cd "$(dirname "$0")/../../../.."
B=.bench/bin; R=/tmp/r94; mkdir -p $R
lscpu > $R/machine.txt 2>&1
{
for round in 1 2; do
  for b in fine split; do
    timeout 100 $B/report-$b --out $R/cull-$b-$round --only cull --no-gpu 2>/dev/null | grep "^| cull" | awk -F'|' -v b=$b -v r=$round '{print "round", r, b, $2, "threads", $3, "ms", $4}'
  done
  for o in 1000000; do
    for t in 1 16; do
      for b in fine split; do
        out=$(timeout 60 $B/demo-$b --backend null --objects $o --frames 60 --threads $t 2>&1)
        f=$(echo "$out" | grep "^| frame (cpu)" | awk -F'|' '{print $4}')
        c=$(echo "$out" | grep "^| cull " | awk -F'|' '{print $4}')
        echo "round $round demo-$b objects $o threads $t frame $f cull $c"
      done
    done
  done
done
} > $R/ab.txt 2>&1
tar czf $OUT/run94.tgz -C $R ab.txt machine.txt
cat $R/ab.txt
