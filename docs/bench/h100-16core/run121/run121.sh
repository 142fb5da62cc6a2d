#!/bin/bash
# Run 121 on the 16-core host (prepared, not yet run): the cull cuts each part's tail by
# the blocks of last frame's queue, and each merge block gathers and sorts its own tail
# pairs in the merge's fork, instead of one worker sorting the whole tail before it
# (docs/bench/2core/run121/: the change and the 2-core figures). Binaries in
# .bench/r121x/bins.tar.xz (the tree's 64 MiB limit): demo-base (a904f15's library
# code), demo-new (dd66b89: the change, cut from 8 workers, SPLIT_MIN_THREADS = 8), demo-new4 (the
# same cut from 4), demo-new256 (demo-new with CUT_SLACK = 256: a part's tail is cut up to
# a quarter of its objects and 256, so the transparent view's tails, most of its queue,
# are cut too), demo-tracy (demo-new with the tracy feature), tracy/capture and
# tracy/csvexport. Digests at 1, 4, 8 and 16 threads; paired alternating rounds of 600
# frames, null backend (ROUNDS and "OBJECTS:THREADS ..." as arguments 1 and 2); then a
# Tracy capture of demo-new at 100k objects on 16 threads (its sort phases:
# docs/bench/tools/tracy_phases.py).
cd "$(dirname "$0")/../../../.."
B=/tmp/b121; mkdir -p $B && tar xJf .bench/r121x/bins.tar.xz -C $B
lscpu > $OUT/machine.txt 2>&1
for b in base new new4 new256; do for t in 1 4 8 16; do echo "$b $t $($B/demo-$b --backend null --digest --frames 40 --threads $t | grep digest | md5sum)"; done; done > $OUT/digests.txt
docs/bench/tools/ab_demo.sh "${1:-6}" 600 "${2:-100000:16 1000000:16 100000:8 1000000:8 100000:4}" $B base new new4 new256 > $OUT/ab.txt 2>&1
{ for n in new new4 new256; do echo "== demo-$n against demo-base"; python3 docs/bench/tools/paired_ratios.py $OUT/ab.txt demo-base demo-$n
  echo "minimums:"; python3 docs/bench/tools/paired_ratios.py $OUT/ab.txt demo-base demo-$n min; done; } > $OUT/ratios.txt
$B/tracy/capture -o /tmp/c16.tracy -a 127.0.0.1 -f > /dev/null 2>&1 &
sleep 1
TRACY_NO_EXIT=1 timeout 60 $B/demo-tracy --backend null --objects 100000 --threads 16 --frames 300 --wait-for-profiler 20 > /dev/null 2>&1
wait
$B/tracy/csvexport -u /tmp/c16.tracy | gzip > $OUT/events-100k-16.csv.gz
python3 docs/bench/tools/tracy_phases.py $OUT/events-100k-16.csv.gz > $OUT/phases-100k-16.txt
cat $OUT/digests.txt | awk '{print $1, $2, substr($3,1,8)}' | tr '\n' ';'; echo; cat $OUT/ratios.txt; grep -E "^opaque|^transparent" $OUT/phases-100k-16.txt
