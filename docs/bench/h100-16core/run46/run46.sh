#!/bin/bash
# Run 46: issue 21's Bevy scene on our side: the --write-cube-grid file (250 x 250 cubes,
# 256 materials) loaded with --gltf and placed 16 times (1M objects), 960x540, 16 threads,
# the sun's two cascades (--views 3) and the main view alone (--views 1); the 24-vertex
# cube (issue 21's table) and the 8-vertex one; CPU cull with the default encoding and
# GPU cull with command-buffer encoding. Then --scene cubes at the same size for reference.
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
B=.bench/bin
$B/demo --write-cube-grid /tmp/g24.glb --grid-cube 24 > $OUT/grids.txt
$B/demo --write-cube-grid /tmp/g8.glb >> $OUT/grids.txt
common="--threads 16 --width 960 --height 540 --objects 1000000 --frames 150"
line() { echo "$1 $(grep -E 'frames/s completed' $2 | sed 's/(the last.*//') $(grep -E '^GPU time of the passes' $2) | $(grep -E '^\| (shadow-0|shadow-1|opaque) ' $2 | awk -F'|' '{printf "%s %s ", $2, $6}') | cpu: $(grep -E '^\| frame \(cpu\)' $2)" >> $OUT/summary.txt; }
for g in 24 8; do
  for v in 3 1; do
    for c in cpu gpu; do
      extra=$([ $c = gpu ] && echo "--cull gpu --encoding buffer" || echo "--cull cpu")
      f=$OUT/gltf$g-v$v-$c.txt
      $B/demo $common --gltf /tmp/g$g.glb --views $v $extra --out $OUT/gltf$g-v$v-$c.png > $f 2>&1
      line "gltf$g views$v $c" $f
    done
  done
done
for v in 3 1; do
  f=$OUT/cubes-v$v-gpu.txt
  $B/demo $common --scene cubes --views $v --cull gpu --encoding buffer --out /tmp/c.png > $f 2>&1
  line "cubes views$v gpu" $f
done
cat $OUT/summary.txt
