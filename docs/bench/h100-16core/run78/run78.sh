#!/bin/bash
# Run 78 (issue 23): streaming against a still scene at a7c2ab1's demo, many alternating
# pairs (the order flips each pair), as session 34 asked: 1M objects on Vulkan, 16 threads,
# 600 frames after --warm-up, --stream --stream-mb 0.723 (about 300 MB/s on this host in run
# 50). Each run's render-call row, its parts, frames/s and the stream's line.
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
lscpu | grep -E "Model name|^CPU\(s\)"
pick() { grep -E "^\| (frame \(cpu\)|  of it: (waiting|setup|job graph)[^|]*) |frames/s|^stream: [0-9]"; }
for pair in $(seq 1 ${PAIRS:-12}); do
  if [ $((pair % 2)) = 1 ]; then order="still stream"; else order="stream still"; fi
  for mode in $order; do
    args="--objects 1000000 --threads 16 --frames 600 --warm-up"
    [ $mode = stream ] && args="$args --stream --stream-mb 0.723"
    echo "== pair $pair $mode"
    timeout 60 .bench/bin/switchyard-demo $args --out /tmp/x.png 2>&1 | pick | cut -c1-260
  done
done
