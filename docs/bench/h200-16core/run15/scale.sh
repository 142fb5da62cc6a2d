#!/bin/bash
cd "$(dirname "$0")/.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json WGPU_BACKEND=vulkan
D=.bench/bin/switchyard-demo
for n in 4000000 10000000; do for v in 1 3; do
  $D --scene cubes --objects $n --width 1920 --height 1080 --views $v --frames 100 --threads 16 --cull gpu --out /tmp/x.png > $OUT/gpu-cubes-$n-v$v.txt 2>&1
done; done
for v in 1 3; do
  $D --scene cubes --objects 1000000 --width 1920 --height 1080 --views $v --frames 300 --threads 16 --cull gpu --out /tmp/x.png > $OUT/gpu-cubes-1000000-v$v.txt 2>&1
done
