#!/bin/bash
# Casters per cascade (Camera::receivers): old demo (b7979b7) vs new, H200, 16 threads.
cd "$(dirname "$0")/.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
run() { name=$1; bin=$2; shift 2; s=$(date +%s); timeout 170 .bench/bin/$bin --threads 16 "$@" > $L/$name.txt 2>&1; echo "$name rc=$? $(( $(date +%s) - s ))s" >> $OUT/rc.txt; grep -E "frames/s completed|visible per|kept by|^\| (frame \(cpu\)|opaque|shadow|  of it: job graph)" $L/$name.txt | sed "s/^/$name: /" >> $OUT/summary.txt; }
for round in 1 2; do
  for b in demo demo-new; do
    run cubes-$b-r$round $b --width 1920 --height 1080 --out /tmp/x.png --scene cubes --objects 1000000 --views 3 --cull gpu --frames 200
    run null100k-$b-r$round $b --backend null --frames 600
  done
done
for b in demo-new demo; do
  run street10m-$b $b --width 1920 --height 1080 --out /tmp/x.png --objects 10000000 --street --cull gpu --encoding buffer --occlusion --frames 60
done
