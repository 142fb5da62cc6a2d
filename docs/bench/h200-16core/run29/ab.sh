#!/usr/bin/env bash
# Alternating A/B of two demo binaries on the H200 (run 29).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
B=$(pwd)/.bench/bin
cd "$OUT"
nproc > all.txt; nvidia-smi -L >> all.txt 2>&1
for r in 1 2 3; do for v in old new; do
  echo "== cubes $v round $r" >> all.txt
  timeout 120 "$B/demo-$v" --scene cubes --objects 1000000 --frames 300 --threads 16 --out c.png >> all.txt 2>&1
  echo "== city $v round $r" >> all.txt
  timeout 120 "$B/demo-$v" --objects 1000000 --frames 300 --threads 16 --out d.png >> all.txt 2>&1
  echo "== street-occlusion $v round $r" >> all.txt
  timeout 120 "$B/demo-$v" --objects 1000000 --street --occlusion --frames 300 --threads 16 --out s.png >> all.txt 2>&1
done; done
"$B/demo-new" --objects 100000 --frames 30 --gpu-trace gpu.json --out x.png > trace.txt 2>&1
grep -E "^== |frame \(cpu\)|^\| submit|gpu-cull|occlusion:|frames/s completed|GPU time of the passes|adapter" all.txt > summary.txt
