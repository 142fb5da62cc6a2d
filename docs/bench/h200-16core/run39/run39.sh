#!/bin/bash
# Run 39 (issues 21, 22): indexed materials, count buffers and the opaque pass drawing the
# prepass's visible set on the H200 (the demo of 1e23602; each off through the demo's
# switches: perdraw = --no-indexed-materials, nocount and noreuse on top of it; rounds
# alternating), the cube grid with cached cascades, and sort_cells of 1cf57e7 (run 38's kept
# build) against c8d1e92 (early merge, LSD digits up to the highest needed, the sparse split
# rule) at 1-16 threads.
cd "$(dirname "$0")/../../../.."
T0=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
L=/tmp/r39; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $L/gpu.txt
B=.bench/bin
run() { name=$1; shift; s=$(date +%s); timeout 120 $B/demo --threads 16 "$@" > $L/$name.txt 2>&1; echo "$name rc=$? $(( $(date +%s) - s ))s" >> $L/rc.txt
  grep -E "frames/s completed|visible per|kept by|^count buffers|^prepass:|^shadows:|^\| (frame \(cpu\)|record|submit|gpu wait|prepass|opaque|shadow|transparent)" $L/$name.txt | sed "s/^/$name: /" >> $L/summary.txt; cp $L/summary.txt $L/rc.txt $OUT/; }
street="--width 1920 --height 1080 --out /tmp/x.png --objects 10000000 --street --cull gpu --encoding buffer --occlusion --receivers --frames 60"
cubes="--width 1920 --height 1080 --out /tmp/x.png --scene cubes --objects 1000000 --views 3 --cull gpu --encoding buffer --frames 200"
flags() { case $1 in ix) echo "";; perdraw) echo "--no-indexed-materials";; nocount) echo "--no-indexed-materials --no-indirect-count";; noreuse) echo "--no-indexed-materials --no-prepass-reuse";; cached) echo "--cache-shadows";; esac; }
for r in $(seq 1 ${ROUNDS:-2}); do
  if [ $r = 1 ]; then order="ix perdraw nocount noreuse"; else order="noreuse nocount perdraw ix"; fi
  for v in $order; do run street-$v-r$r $street $(flags $v); done
  if [ $r = 1 ]; then order="ix perdraw nocount cached"; else order="cached nocount perdraw ix"; fi
  for v in $order; do run cubes-$v-r$r $cubes $(flags $v); done
  [ -n "$SHORT" ] && continue
  for v in ix perdraw; do run city100k-$v-r$r --out /tmp/z.png --frames 300 $(flags $v); done
done
[ -n "$SHORT" ] && { tar czf $OUT/run39-demo.tgz -C $L .; exit 0; }
run street-norecv ${street/--receivers/}
# The city's default cull (CPU, bundles) against the GPU cull now that its buckets span materials.
for v in cpu gpu; do run city1m-$v --out /tmp/z.png --objects 1000000 --frames 200 --cull $v $([ $v = gpu ] && echo "--encoding buffer"); done
for t in 1 16; do $B/demo --backend null --digest --frames 3 --threads $t | grep digest | md5sum | sed "s/^/null default t$t: /"; done >> $L/digests.txt
$B/demo --digest --frames 3 --threads 16 --out /tmp/y.png | grep digest | md5sum | sed "s/^/wgpu default t16: /" >> $L/digests.txt
tar czf $OUT/run39-demo.tgz -C $L .
# sort_cells while the call's time lasts (a round of both binaries takes about a minute).
for r in 1 2 3; do
  [ $(( $(date +%s) - T0 )) -gt ${CELLS_UNTIL:-200} ] && break
  if [ $((r % 2)) = 1 ]; then order="old new"; else order="new old"; fi
  for b in $order; do timeout 60 $B/cells-$b 3 1 2 4 8 16 | sed "s/^/$b r$r /"; done
done > $L/cells_ab.txt 2>&1
tar czf $OUT/run39.tgz -C $L .
