#!/bin/bash
# Run 108 on the 16-core host: the culls one after another, the main view's first (a probe:
# CULL_CHAIN=1 in a build of build_graph that chains the cull jobs, opaque and its
# follower first, then the shadow views from the last), against the same binary without
# it (the culls all at once, as the head runs them). Alternating, paired, eight rounds:
# the demo at 100k objects on 16 and 8 threads and 1M on 16 and 8.
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/b && tar xJf .bench/c.tar.xz -C /tmp/b
B=/tmp/b/bin; R=$OUT
docs/bench/tools/ab_demo.sh 8 600 "100000:16 100000:8 1000000:16 1000000:8" $B base chain > $R/ab.txt 2>&1
python3 docs/bench/tools/paired_ratios.py $R/ab.txt demo-base demo-chain | tee $R/ratios.txt
for b in base chain; do $B/demo-$b --backend null --objects 1000000 --threads 16 --frames 600 > $R/demo-$b-1M-16.txt 2>&1; done
grep -h "critical" $R/demo-*-1M-16.txt
