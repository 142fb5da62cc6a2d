#!/bin/bash
# Run 78b (issue 23): what makes the streamed frames slower on the GPU. The demo of run 78
# with a probe switch (not kept: SW_NOMIPS=1 makes the streamed textures without generated
# mips), 1M objects, 16 threads, 600 frames after --warm-up: still, streamed, streamed
# without mips, three rotating rounds; each run's frame rows, GPU ms per pass and frames/s.
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
for r in 1 2 3; do
  for mode in still stream nomips; do
    args="--objects 1000000 --threads 16 --frames 600 --warm-up"
    [ $mode != still ] && args="$args --stream --stream-mb 0.723"
    echo "== round $r $mode"
    if [ $mode = nomips ]; then export SW_NOMIPS=1; else unset SW_NOMIPS; fi
    timeout 60 .bench/bin/demo-probe $args --out /tmp/x.png 2>&1 | grep -E "^\| (frame|submit|gpu wait|  of it|shadow|opaque|transparent|post|overlay)|frames/s|^stream: [0-9]|^last submitted" | cut -c1-200
  done
done
