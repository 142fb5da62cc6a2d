#!/bin/bash
# Run 44: the stress scene with its cubes as the three faces toward the camera (the lit
# shader's BOX_FACES, the default) against whole cubes (--whole-cubes), one binary
# (demo-faces), alternating; and the report's raster rows (limits and forward passes).
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
B=.bench/bin
cubes="--width 1920 --height 1080 --out /tmp/x.png --scene cubes --objects 1000000 --views 3 --cull gpu --encoding buffer --frames 200"
for r in 1 2; do
  if [ $r = 1 ]; then order="faces whole"; else order="whole faces"; fi
  for v in $order; do
    $B/demo-faces --threads 16 $cubes $([ $v = whole ] && echo --whole-cubes) > $OUT/cubes-$v-r$r.txt 2>&1
    echo "$v r$r $(grep -E 'frames/s completed' $OUT/cubes-$v-r$r.txt | sed 's/(the last.*//') $(grep -E '^\| (shadow-0|shadow-1|opaque) ' $OUT/cubes-$v-r$r.txt | awk -F'|' '{printf "%s %s ", $2, $6}')" >> $OUT/summary.txt
  done
done
$B/demo-faces --digest --frames 3 --threads 16 --scene cubes --objects 10000 --out /tmp/f.png | grep digest | md5sum | sed 's/^/faces t16: /' >> $OUT/summary.txt
$B/demo-faces --digest --frames 3 --threads 16 --scene cubes --objects 10000 --out /tmp/w.png --whole-cubes | grep digest | md5sum | sed 's/^/whole t16: /' >> $OUT/summary.txt
cmp /tmp/f.png /tmp/w.png && echo "PNGs identical" >> $OUT/summary.txt
timeout 200 $B/report-new --only raster --out /tmp/rep > $OUT/raster.txt 2>&1
cat $OUT/summary.txt; grep -E "^\| (raster|forward)" $OUT/raster.txt
