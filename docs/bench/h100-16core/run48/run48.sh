#!/bin/bash
# Run 48: the lit shader's UNTEXTURED keyword (no uv among the vertex outputs; the stress
# scene's and untextured glTF materials take it) and FLAT without the normal (demo-new)
# against the binary before both (demo-old): the stress scene at 1080p, 1M cubes, 3 views
# and the main view alone, GPU cull, two alternating rounds; then issue 21's Bevy scene
# (the 24-vertex grid file, 960x540) with demo-new. Outputs in one tar.
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
B=.bench/bin
O=/tmp/run48; mkdir -p $O
line() { echo "$1 $(grep -E 'frames/s completed' $2 | sed 's/(the last.*//') $(grep -E '^GPU time of the passes' $2) | $(grep -E '^\| (shadow-0|shadow-1|opaque) ' $2 | awk -F'|' '{printf "%s %s ", $2, $6}') | cpu: $(grep -E '^\| frame \(cpu\)' $2)" >> $O/summary.txt; }
c="--threads 16 --width 1920 --height 1080 --scene cubes --objects 1000000 --cull gpu --encoding buffer --frames 200"
for r in 1 2; do
  if [ $r = 1 ]; then order="old new"; else order="new old"; fi
  for v in 3 1; do
    for b in $order; do
      f=$O/cubes-v$v-$b-r$r.txt
      $B/demo-$b $c --views $v --out $O/cubes-v$v-$b-r$r.png > $f 2>&1
      line "cubes1080 views$v $b r$r" $f
    done
  done
done
$B/demo-new --write-cube-grid /tmp/g24.glb --grid-cube 24 > $O/grids.txt
g="--threads 16 --width 960 --height 540 --objects 1000000 --frames 150 --gltf /tmp/g24.glb --cull gpu --encoding buffer"
for v in 3 1; do
  f=$O/gltf24-v$v-welded.txt
  $B/demo-new $g --views $v --out $O/gltf24-v$v-welded.png > $f 2>&1
  line "gltf24 views$v welded" $f
done
cat $O/summary.txt
tar czf $OUT/run48.tgz -C /tmp run48
