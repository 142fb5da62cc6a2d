#!/bin/bash
# Run 111 on the 16-core host: the patch split in two (patch[forward] after the forward
# and depth culls, patch[shadow] after the shadow culls and patch[forward]; each record
# waits for its part's) against the head before it (one patch after every cull), and the
# split with the culls ordered (a probe, CULL_CHAIN in build_graph: 1 chains every cull,
# forward views first; 2 runs the shadow culls after the forward culls). Alternating,
# paired, six rounds: the demo at 100k objects on 16 and 8 threads and 1M on 16 and 8.
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/b && tar xJf .bench/c.tar.xz -C /tmp/b
B=/tmp/b/bin; R=$OUT
for b in base split; do for t in 1 16; do echo "$b $t $($B/demo-$b --backend null --digest --frames 3 --threads $t | grep digest | md5sum)"; done; done | tee $R/digests.txt
docs/bench/tools/ab_demo.sh 6 600 "100000:16 100000:8 1000000:16 1000000:8" $B base split chain1 chain2 > $R/ab.txt 2>&1
for n in split chain1 chain2; do echo "== $n"; python3 docs/bench/tools/paired_ratios.py $R/ab.txt demo-base demo-$n; done | tee $R/ratios.txt
for b in base split chain1 chain2; do $B/demo-$b --backend null --objects 1000000 --threads 16 --frames 600 > $R/demo-$b-1M-16.txt 2>&1; done
grep -h "critical" $R/demo-*-1M-16.txt
