#!/bin/bash
# Run 79 (issue 23): mip levels drawn from a source up to four levels above, a batch's
# textures source level by source level (new: this tree) against each level from the one
# above, texture by texture (old: a7c2ab1). The demo at 1M objects on Vulkan, 16 threads,
# 600 frames after --warm-up, still and --stream --stream-mb 0.723, eight rounds, the
# order rotating; each run's frame rows, GPU ms per pass, frames/s and the stream's line.
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
lscpu | grep -E "Model name|^CPU\(s\)"
runs=("old still" "old stream" "new still" "new stream")
for r in $(seq 1 ${ROUNDS:-8}); do
  for i in 0 1 2 3; do
    set -- ${runs[$(( (i + r) % 4 ))]}
    bin=.bench/bin/switchyard-demo; [ $1 = new ] && bin=.bench/bin/demo-mips
    args="--objects 1000000 --threads 16 --frames 600 --warm-up"
    [ $2 = stream ] && args="$args --stream --stream-mb 0.723"
    echo "== round $r $1 $2"
    timeout 60 $bin $args --out /tmp/x.png 2>&1 | grep -E "^\| (frame|submit|gpu wait|  of it|shadow|opaque|transparent|post|overlay)|frames/s|^stream: [0-9]" | cut -c1-200
  done
done
