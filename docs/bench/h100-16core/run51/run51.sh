#!/bin/bash
# Run 51: issue 23's streaming target on the H100 host: the demo at 1M objects, 16 threads,
# 3000 frames after warm_up (p99: the 30th-worst render call), a still scene against --stream at 0.723 MB a frame (about
# 240 MB/s), alternating (the order flips each round), six rounds, one binary (the tree of d1b6b5f); the render
# call's p50/p99, the job graph's, frames/s on the GPU and the GPU ms per pass.
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
O=/tmp/run51; mkdir -p $O
for round in 1 2 3 4 5 6; do
  if [ $((round % 2)) = 1 ]; then modes="static stream"; else modes="stream static"; fi
  for mode in $modes; do
    args="--objects 1000000 --threads 16 --frames 3000 --warm-up"
    [ $mode = stream ] && args="$args --stream --stream-mb 0.723"
    .bench/bin/demo-new $args --out /tmp/x.png > $O/$mode-r$round.txt 2>&1
    echo "$mode r$round $(grep -E '^\| frame \(cpu\)' $O/$mode-r$round.txt) $(grep -E 'of it: job graph' $O/$mode-r$round.txt) $(grep -E 'frames/s completed' $O/$mode-r$round.txt | sed 's/(the last.*//') $(grep -E '^GPU time of the passes' $O/$mode-r$round.txt)" >> $O/summary.txt
  done
done
cat $O/summary.txt
tar czf $OUT/run51.tgz -C /tmp run51
