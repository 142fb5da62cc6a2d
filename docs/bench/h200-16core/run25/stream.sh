#!/bin/bash
# Run 25: the demo at 1M objects, 16 threads, static against --stream at about 256 MB/s,
# alternating the run-24 binary (old: per-material groups made on arrival, staging and
# the frame's finish under the registry lock) with this one (new), three rounds.
common="--objects 1000000 --threads 16 --frames 600 --warm-up"
pick() { grep -E "^\| (submit|gpu wait|frame \(cpu\)|patch|record|  of it[^|]*) |frames/s|^stream|uploads:"; }
echo "== new static round 0 (sets the rate)"
.bench/bin/demo-new $common --out /tmp/x.png > /tmp/s0.txt 2>&1; pick < /tmp/s0.txt
fps=$(grep -oP 'completed on the GPU: \K[0-9.]+' /tmp/s0.txt)
MB=$(python3 -c "print(round(256/$fps, 3))")
echo "static frames/s $fps: --stream-mb $MB for 256 MB/s"
for round in 1 2 3; do
  for bin in old new; do
    B=.bench/bin/demo-new; [ $bin = old ] && B=.bench/bin/demo-stream
    for mode in static stream; do
      args="$common"
      [ $mode = stream ] && args="$args --stream --stream-mb $MB"
      echo "== $bin $mode round $round"
      $B $args --out /tmp/x.png 2>&1 | pick
    done
  done
done
