#!/bin/bash
# Run 83 (issue 23): the head's demo (e45223e: compute mips in their final shader, removed
# blocks written as one range): six more still/streamed pairs as in run 82, then 10,000
# streamed frames after --warm-up (pipelines and shader modules made in frames, uploads).
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
PAIRS=6 bash docs/bench/h100-16core/run82/run82.sh
echo "== 10000 streamed frames"
timeout 120 .bench/bin/demo-new --objects 1000000 --threads 16 --frames 10000 --warm-up --stream --stream-mb 0.723 \
  --out /tmp/x.png 2>&1 | grep -E "^warm-up|^stream|created during frames|frames/s|^\| frame \(cpu\)" | cut -c1-400
