#!/bin/bash
# Run 81 (issue 23): the streamed demo's GPU time and the render call's p99 against a
# still scene. Binaries: old (a7c2ab1: a render pass per mip level), mips (run 80's
# compute mips), new (compute mips, and a run of objects freed downward marked as one
# dirty range: the frame writes each per-object buffer once per removed block, not once
# per object). The demo at 1M objects on Vulkan, 16 threads, 600 frames after --warm-up;
# each round: new still, and each binary streamed (--stream-mb 0.723), the order rotating.
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
lscpu | grep -E "Model name|^CPU\(s\)"
runs=("new still" "old stream" "mips stream" "new stream")
for r in $(seq 1 ${ROUNDS:-10}); do
  for i in 0 1 2 3; do
    set -- ${runs[$(( (i + r) % 4 ))]}
    case $1 in old) bin=.bench/bin/switchyard-demo;; mips) bin=.bench/bin/demo-mips;; *) bin=.bench/bin/demo-new;; esac
    args="--objects 1000000 --threads 16 --frames 600 --warm-up"
    [ $2 = stream ] && args="$args --stream --stream-mb 0.723"
    echo "== round $r $1 $2"
    timeout 60 $bin $args --out /tmp/x.png 2>&1 | grep -E "^\| (frame|submit|gpu wait|  of it|shadow|opaque|transparent|post|overlay)|frames/s|^stream: [0-9]" | cut -c1-200
  done
done
