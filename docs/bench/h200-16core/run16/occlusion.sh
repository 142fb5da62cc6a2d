#!/bin/bash
# Occlusion culling on the H200, 1080p, 16 threads. $1 = small: city 1M at street level and
# cubes 1M (main view), frustum vs occlusion, two alternating rounds; $1 = large: city 10M.
cd "$(dirname "$0")/.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json WGPU_BACKEND=vulkan
D=.bench/bin/switchyard-demo
L=/tmp/occ; mkdir -p $L
nvidia-smi --query-gpu=name --format=csv,noheader > $L/gpu.txt
run() { name=$1; shift; s=$(date +%s); timeout 200 $D --width 1920 --height 1080 --threads 16 --out /tmp/x.png "$@" > $L/$name.txt 2>&1; echo "$name rc=$? $(( $(date +%s) - s ))s" >> $OUT/rc.txt; grep -E "frames/s completed|kept by|^\| (frame \(cpu\)|opaque|main|\(gpu-cull|\(occlusion)|GPU time of the passes" $L/$name.txt | sed "s/^/$name: /" >> $OUT/summary.txt; }
if [ "$1" = small ]; then
  for round in 1 2; do
    for o in "" "--occlusion"; do
      tag=${o:+occ}; tag=${tag:-frustum}
      run street-1m-$tag-r$round --objects 1000000 --street --cull gpu $o --frames 300
      run cubes-1m-v1-$tag-r$round --scene cubes --objects 1000000 --views 1 --cull gpu $o --frames 300
    done
  done
  run street-1m-cpu --objects 1000000 --street --cull cpu --frames 300
elif [ "$1" = main ]; then
  for n in 1000000 10000000; do
    for o in "--occlusion" ""; do
      tag=${o:+occ}; tag=${tag:-frustum}
      run street-$n-v1-$tag --objects $n --views 1 --street --cull gpu --encoding buffer $o --frames 200
    done
  done
else
  for o in "--occlusion" ""; do
    tag=${o:+occ}; tag=${tag:-frustum}
    run street-1m-buffer-$tag --objects 1000000 --street --cull gpu --encoding buffer $o --frames 300
  done
  for o in "--occlusion" ""; do
    tag=${o:+occ}; tag=${tag:-frustum}
    run street-10m-buffer-$tag --objects 10000000 --street --cull gpu --encoding buffer $o --frames 200
  done
fi
tar czf $OUT/logs-$1.tgz -C $L .
