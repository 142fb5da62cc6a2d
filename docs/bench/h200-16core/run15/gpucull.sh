#!/bin/bash
# GPU vs CPU cull on the H200: cubes at 1M (1 and 3 views, 1080p), city 100k; rounds alternate.
cd "$(dirname "$0")/.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json WGPU_BACKEND=vulkan
D=.bench/bin/switchyard-demo
for round in 1 2; do
  for cull in cpu gpu; do
    for v in 1 3; do
      $D --scene cubes --objects 1000000 --width 1920 --height 1080 --views $v --frames 300 --threads 16 --cull $cull --out /tmp/x.png > $OUT/cubes-1m-v$v-$cull-r$round.txt 2>&1
    done
    $D --frames 300 --threads 16 --cull $cull --out /tmp/x.png > $OUT/city-100k-$cull-r$round.txt 2>&1
  done
done
