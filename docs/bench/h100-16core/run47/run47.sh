#!/bin/bash
# Run 47: (1) issue 21's Bevy scene (the 24-vertex --write-cube-grid file, --gltf, 1M
# objects, 960x540, 16 threads, GPU cull, command-buffer encoding) with its flat-shaded
# cubes welded to 8 vertices and lit with FLAT (the default) against --gltf-as-given;
# (2) the stress scene at 1080p (1M, 3 views) with the lit shader's FLAT variants without
# the normal among their vertex outputs (demo-new) against the binary before (demo-old),
# alternating, two rounds. Outputs in one tar (the device returns at most 8 files).
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
B=.bench/bin
O=/tmp/run47; mkdir -p $O
$B/demo-new --write-cube-grid /tmp/g24.glb --grid-cube 24 > $O/grids.txt
line() { echo "$1 $(grep -E 'frames/s completed' $2 | sed 's/(the last.*//') $(grep -E '^GPU time of the passes' $2) | $(grep -E '^\| (shadow-0|shadow-1|opaque) ' $2 | awk -F'|' '{printf "%s %s ", $2, $6}') | cpu: $(grep -E '^\| frame \(cpu\)' $2)" >> $O/summary.txt; }
g="--threads 16 --width 960 --height 540 --objects 1000000 --frames 150 --gltf /tmp/g24.glb --cull gpu --encoding buffer"
for v in 3 1; do
  for w in welded given; do
    f=$O/gltf24-v$v-$w.txt
    $B/demo-new $g --views $v $([ $w = given ] && echo --gltf-as-given) --out $O/gltf24-v$v-$w.png > $f 2>&1
    line "gltf24 views$v $w" $f
  done
done
c="--threads 16 --width 1920 --height 1080 --scene cubes --objects 1000000 --views 3 --cull gpu --encoding buffer --frames 200"
for r in 1 2; do
  if [ $r = 1 ]; then order="old new"; else order="new old"; fi
  for b in $order; do
    f=$O/cubes-$b-r$r.txt
    $B/demo-$b $c --out $O/cubes-$b-r$r.png > $f 2>&1
    line "cubes1080 views3 $b r$r" $f
  done
done
cmp $O/cubes-old-r1.png $O/cubes-new-r1.png && echo "cube PNGs identical (old, new)" >> $O/summary.txt
cat $O/summary.txt
tar czf $OUT/run47.tgz -C /tmp run47
