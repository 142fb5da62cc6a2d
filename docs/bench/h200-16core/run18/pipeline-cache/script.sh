#!/bin/bash
# Session 14: pipeline warm-up cold, then with the driver's pipeline cache from the first run.
cd "$(dirname "$0")"
mkdir -p $OUT/pc
rm -f /tmp/pc.bin
for run in cold cached cached-again; do
  ./bin/demo --objects 3000 --frames 3 --warm-up --pipeline-cache /tmp/pc.bin --out /tmp/pc.png > $OUT/pc/$run.txt 2>&1
done
rm -f /tmp/pc.bin
./bin/demo --objects 3000 --frames 3 --warm-up --out /tmp/pc.png > $OUT/pc/no-cache-flag.txt 2>&1
grep -h "adapter\|warm-up\|pipeline cache" $OUT/pc/*.txt
