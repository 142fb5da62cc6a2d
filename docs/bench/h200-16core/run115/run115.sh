#!/bin/bash
# Run 115 on the 16-core host (an H200 loan): software prefetch in the cull's key writing (a probe,
# key-prefetch.diff on 9957453: with KEY_PREFETCH set, write_keys prefetches the next 16
# visible objects' key slots, x positions and materials). One binary, the switch by
# environment ("pf" against "base"), paired, eight alternating rounds of 600 frames.
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/q && tar xJf .bench/q.tar.xz -C /tmp/q
B=/tmp/q/bin
for b in base pf; do echo "$b $($B/demo-$b --backend null --digest --frames 3 --threads 16 | grep digest | md5sum)"; done
docs/bench/tools/ab_demo.sh 8 600 "100000:16 1000000:16 100000:1" $B base pf > $OUT/ab.txt 2>&1
python3 docs/bench/tools/paired_ratios.py $OUT/ab.txt demo-base demo-pf | tee $OUT/ratios.txt
