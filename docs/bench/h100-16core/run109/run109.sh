#!/bin/bash
# Run 109 on the 16-core host: the tail picked per block ("picked": each block of last
# frame's queue picks the tail pairs of its range from the cull parts' tails and sorts
# them inside the merge's fork; tails over 8k pairs as before) against the head before it
# ("base", c0c0579's code). Alternating, paired, eight rounds: the demo (city, full graph,
# null backend, 600 frames) at 100k objects on 16 and 8 threads and 1M on 16 and 4; then a
# Tracy capture of each at 1M objects on 16 threads. Binaries in .bench/p.tar.xz (bin/
# stripped; tracy/ from ../shared/tools/tracy); the tracy ones with --features tracy.
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/b && tar xJf .bench/p.tar.xz -C /tmp/b
B=/tmp/b/bin; T=/tmp/b/tracy; R=$OUT
docs/bench/tools/ab_demo.sh 8 600 "100000:16 100000:8 1000000:16 1000000:4" $B base picked > $R/ab.txt 2>&1
python3 docs/bench/tools/paired_ratios.py $R/ab.txt demo-base demo-picked | tee $R/ratios.txt
for b in base picked; do
  $T/capture -o /tmp/c.tracy -a 127.0.0.1 -f > /tmp/cap.log 2>&1 &
  sleep 1
  TRACY_NO_EXIT=1 timeout 60 $B/demo-tracy-$b --backend null --objects 1000000 --threads 16 --frames 200 \
    --wait-for-profiler 30 >> $R/demo-tracy.txt 2>&1
  wait
  $T/csvexport -u /tmp/c.tracy | gzip > $R/events-$b-1000000-16.csv.gz
done
grep "workers busy" $R/demo-tracy.txt
