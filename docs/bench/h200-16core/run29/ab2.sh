#!/usr/bin/env bash
# Run 29b: the GPU cull's parameters back in a uniform buffer on GPUs (9803fa0) against 813fc09.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
B=$(pwd)/.bench/bin
cd "$OUT"
for r in 1 2 3; do for v in old new; do
  echo "== cubes $v round $r" >> all.txt
  timeout 120 "$B/demo-$v" --scene cubes --objects 1000000 --frames 300 --threads 16 --out c.png >> all.txt 2>&1
  echo "== street-occlusion $v round $r" >> all.txt
  timeout 120 "$B/demo-$v" --objects 1000000 --street --occlusion --frames 300 --threads 16 --out s.png >> all.txt 2>&1
done; done
grep -E "^== |gpu-cull|occlusion:|frames/s completed|adapter" all.txt > summary.txt
