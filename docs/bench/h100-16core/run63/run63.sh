#!/bin/bash
# Run 63: run 62 again with buffer writes spanning staging chunks (336a180) (issue 23: the first frame's staging).
# 1M objects, 16 threads, --warm-up, --stream
# at 0.723 MB a frame, 600 frames, the demo built with --features tracy (the tree of
# 336a180), waiting for the profiler; csvexport's per-zone statistics, and the longest
# events of the upload and submission threads' zones.
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
T=.bench/tracy
$T/capture -o /tmp/s.tracy -a 127.0.0.1 -f > /tmp/cap.log 2>&1 &
sleep 1
TRACY_NO_EXIT=1 timeout 200 .bench/bin/demo-tracy --objects 1000000 --threads 16 --frames 600 --warm-up \
  --stream --stream-mb 0.723 --wait-for-profiler 30 --out /tmp/x.png > $OUT/demo.txt 2>&1
wait
tail -3 /tmp/cap.log > $OUT/capture.txt
$T/csvexport /tmp/s.tracy > $OUT/zones.csv
$T/csvexport -u /tmp/s.tracy > /tmp/events.csv
head -1 /tmp/events.csv > $OUT/longest.csv
# The ten longest events of each zone of the upload and submission threads (and the
# render call's frame and slot wait), by exec_time_ns (column 5).
for z in prepare-uploads mip-pipeline stage-uploads stage-ring-lock stage-buffers stage-texture stage-mips stage-finish staging-chunk wait-upload submit-uploads backend-submit submit wait-gpu gather-uploads frame wait-frame-slot; do
  grep -E "^$z," /tmp/events.csv | sort -t, -k5 -n -r | head -10 >> $OUT/longest.csv
done
ls -la /tmp/s.tracy >> $OUT/capture.txt
