#!/bin/bash
# Run 49: issue 21's targets asked of an H200 (an H100 came: gpu.txt), one binary (1aa7361): the stress scene
# (1M cubes, 1080p, GPU cull, command buffers, 16 threads) with the sun's two cascades and
# the main view alone; the Bevy scene (the 24-vertex grid file, --gltf, 1M objects,
# 960x540) welded and as given. Outputs in one tar.
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
B=.bench/bin
O=/tmp/run49; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt 2>&1
line() { echo "$1 $(grep -E 'frames/s completed' $2 | sed 's/(the last.*//') $(grep -E '^GPU time of the passes' $2) | $(grep -E '^\| (shadow-0|shadow-1|opaque) ' $2 | awk -F'|' '{printf "%s %s ", $2, $6}') | cpu: $(grep -E '^\| frame \(cpu\)' $2)" >> $O/summary.txt; }
c="--threads 16 --width 1920 --height 1080 --scene cubes --objects 1000000 --cull gpu --encoding buffer --frames 200"
for v in 3 1; do
  f=$O/cubes-v$v.txt
  $B/demo-new $c --views $v --out /tmp/c.png > $f 2>&1
  line "cubes1080 views$v" $f
done
$B/demo-new --write-cube-grid /tmp/g24.glb --grid-cube 24 > $O/grids.txt
g="--threads 16 --width 960 --height 540 --objects 1000000 --frames 150 --gltf /tmp/g24.glb --cull gpu --encoding buffer"
for v in 3 1; do
  for w in welded given; do
    f=$O/gltf24-v$v-$w.txt
    $B/demo-new $g --views $v $([ $w = given ] && echo --gltf-as-given) --out /tmp/g.png > $f 2>&1
    line "gltf24 views$v $w" $f
  done
done
cat $O/gpu.txt $O/summary.txt
tar czf $OUT/run49.tgz -C /tmp run49
