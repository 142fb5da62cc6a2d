#!/bin/bash
# Run 41: the opaque key's log-spaced depth field (demo-new: this session's change) against
# the linear one (demo: 1e23602, behaviour as 4c321f4) on the null backend at 16 threads,
# alternating rounds; digests of demo-new; a second round of run 39's street and cubes.
cd "$(dirname "$0")/../../../.."
T0=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
L=/tmp/r41; mkdir -p $L; B=.bench/bin
row() { grep -E '^\| (cull|sort|frame \(cpu\)) ' | awk -F'|' '{printf "%s %s %s  ", $2, $4, $5}'; }
for r in 1 2 3 4; do
  if [ $((r % 2)) = 1 ]; then order="demo demo-new"; else order="demo-new demo"; fi
  for b in $order; do for n in 100000 1000000; do
    echo "$b n=$n r$r $($B/$b --backend null --threads 16 --objects $n --frames 400 2>&1 | row)" >> $L/ab.txt
  done; done
  cp $L/ab.txt $OUT/
done
for t in 1 2 8 16; do $B/demo-new --backend null --digest --frames 3 --threads $t | grep digest | md5sum | sed "s/^/null new t$t: /"; done >> $L/digests.txt
$B/demo-new --digest --frames 3 --threads 16 --out /tmp/y.png | grep digest | md5sum | sed "s/^/wgpu new t16: /" >> $L/digests.txt
$B/demo-new --digest --frames 3 --threads 2 --out /tmp/y2.png | grep digest | md5sum | sed "s/^/wgpu new t2: /" >> $L/digests.txt
cp $L/digests.txt $OUT/
street="--width 1920 --height 1080 --out /tmp/x.png --objects 10000000 --street --cull gpu --encoding buffer --occlusion --receivers --frames 60"
cubes="--width 1920 --height 1080 --out /tmp/x.png --scene cubes --objects 1000000 --views 3 --cull gpu --encoding buffer --frames 200"
for v in "" "--no-indexed-materials"; do
  $B/demo-new --threads 16 $street $v > $L/street$v.txt 2>&1
  $B/demo-new --threads 16 $cubes --cache-shadows $v > $L/cubes-cached$v.txt 2>&1
  $B/demo-new --threads 16 $cubes $v > $L/cubes$v.txt 2>&1
done
grep -H "frames/s completed" $L/street*.txt $L/cubes*.txt | sed 's/(the last.*//' >> $L/fps.txt
cp $L/fps.txt $OUT/; tar czf $OUT/run41.tgz -C $L .
echo "took $(( $(date +%s) - T0 ))s"
