#!/bin/bash
# Run 106, second part (the same session, the next loan): the comparison sort as landed
# (COMPARE_MIN 512 to COMPARE_MAX 4095 pairs) in the demo. `small_sort` of the landed
# build; then the demo (city, full graph, null backend, 600 frames) alternating, paired,
# eight rounds: "chained" (c0c0579, the head's code before) against "compare" (with
# kernels/src/sort/compare.rs) at 100k objects on 16 and 8 threads and 1M on 16 and 4; then
# a Tracy capture of each at 1M objects on 16 threads. Binaries in .bench/r.tar.xz (bin/
# stripped; tracy/ from ../shared/tools/tracy); the tracy ones with --features tracy.
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/b && tar xJf .bench/r.tar.xz -C /tmp/b
B=/tmp/b/bin; T=/tmp/b/tracy; R=$OUT
$B/small_sort 15 256 512 1024 2048 4096 8192 > $R/small_sort-landed.txt 2>&1
cat $R/small_sort-landed.txt
docs/bench/tools/ab_demo.sh 8 600 "100000:16 100000:8 1000000:16 1000000:4" $B chained compare > $R/ab.txt 2>&1
python3 docs/bench/tools/paired_ratios.py $R/ab.txt demo-chained demo-compare | tee $R/ratios.txt
for b in chained compare; do
  $T/capture -o /tmp/c.tracy -a 127.0.0.1 -f > /tmp/cap.log 2>&1 &
  sleep 1
  TRACY_NO_EXIT=1 timeout 60 $B/demo-tracy-$b --backend null --objects 1000000 --threads 16 --frames 200 \
    --wait-for-profiler 30 >> $R/demo-tracy.txt 2>&1
  wait
  $T/csvexport -u /tmp/c.tracy | gzip > $R/events-$b-1000000-16.csv.gz
done
grep "workers busy" $R/demo-tracy.txt
