#!/bin/bash
# Run 40: the opaque sort key's depth field, linear (today) against log-spaced levels, on the
# H200's early depth test (a probe build: PROBE_M picks the field, -1 linear 16-bit, m >= 0
# the squared distance's float bits with m mantissa bits, -2 far first, -3 no depth;
# PROBE_STATS=1 prints the opaque pass's fragment-shader invocations each frame), then run 39.
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
L=/tmp/r40; mkdir -p $L
for r in 1 2; do for m in -1 2 1 -3 -2; do
  PROBE_STATS=1 PROBE_M=$m timeout 60 .bench/bin/probe-depth --threads 16 --frames 120 --width 1920 --height 1080 --out /tmp/d.png > $L/m$m-r$r.txt 2>&1
  echo "m=$m r$r fsinv(median of last 100) $(grep fsinv $L/m$m-r$r.txt | tail -100 | awk '{print $2}' | sort -n | sed -n 50p) $(grep -E '^\| (opaque|sort|frame \(cpu\)) ' $L/m$m-r$r.txt | awk -F'|' '{printf "%s %s %s  ", $2, $4, $6}')" >> $L/depth.txt
done; done
cp $L/depth.txt $OUT/
bash docs/bench/h200-16core/run39/run39.sh
