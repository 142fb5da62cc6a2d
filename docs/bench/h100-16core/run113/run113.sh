#!/bin/bash
# Run 113 on the 16-core host (run 112's 16-core half): each cull hands its parts out
# costliest first (by the parts' times in the last cull; "lpt", built at a38970d), against
# the head before the claim order ("split", 2fa958c); and lpt with parts of at most 8k and
# 4k objects (a probe: CULL_PART_MAX in part_len, part-max.diff; "lpt8k", "lpt4k"; the
# head's largest part is 16k). Alternating, paired, six rounds: the demo at 100k objects on
# 16 and 8 threads and 1M on 16 and 8. Then each binary's demo at 1M on 16 threads (the
# last frame's critical path), and Tracy captures of lpt there on 16 threads and on one
# (every event; tracy/ from ../shared/tools/tracy): the work each zone does on 16 threads
# against one; and one at 100k objects on 16 threads (what the main view's sort waits on). At most 8 files come back: the text outputs travel in texts.tar.gz.
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/b /tmp/r && tar xJf .bench/c.tar.xz -C /tmp/b
B=/tmp/b/bin; T=/tmp/b/tracy; R=/tmp/r
lscpu > $R/machine.txt 2>&1
for b in split lpt lpt8k lpt4k; do for t in 1 16; do echo "$b $t $($B/demo-$b --backend null --digest --frames 3 --threads $t | grep digest | md5sum)"; done; done | tee $R/digests.txt
docs/bench/tools/ab_demo.sh 6 600 "100000:16 100000:8 1000000:16 1000000:8" $B split lpt lpt8k lpt4k > $R/ab.txt 2>&1
for n in lpt lpt8k lpt4k; do echo "== $n"; python3 docs/bench/tools/paired_ratios.py $R/ab.txt demo-split demo-$n; done | tee $OUT/ratios.txt
for b in split lpt lpt8k lpt4k; do $B/demo-$b --backend null --objects 1000000 --threads 16 --frames 600 > $R/demo-$b-1M-16.txt 2>&1; done
grep -h "critical" $R/demo-*-1M-16.txt
for c in 1000000:16 1000000:1 100000:16; do
  o=${c%:*}; t=${c#*:}
  $T/capture -o /tmp/c.tracy -a 127.0.0.1 -f > /tmp/cap-$o-$t.log 2>&1 &
  sleep 1
  TRACY_NO_EXIT=1 timeout 90 $B/demo-tracy-lpt --backend null --objects $o --threads $t --frames 120 \
    --wait-for-profiler 30 > $R/demo-tracy-$o-$t.txt 2>&1
  wait
  $T/csvexport -u /tmp/c.tracy | gzip > $OUT/events-lpt-$o-$t.csv.gz
  rm -f /tmp/c.tracy
done
tar czf $OUT/texts.tar.gz -C $R .
ls -la $OUT
