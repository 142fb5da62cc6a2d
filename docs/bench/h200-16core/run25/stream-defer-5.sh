#!/bin/bash
# Run 25, fifth loan: the deferred batch alone, still against streamed at 16 workers, five rounds.
pick() { grep -E "^\| (frame \(cpu\)|  of it: (setup|job graph)[^|]*) |frames/s|^stream: [0-9]"; }
for round in 1 2 3 4 5; do
  for bin in defer; do
    for mode in static stream; do
      args="--objects 1000000 --threads 16 --frames 600 --warm-up"
      [ $mode = stream ] && args="$args --stream --stream-mb 0.723"
      echo "== $bin $mode round $round"
      .bench/bin/demo-$bin $args --out /tmp/x.png 2>&1 | pick | cut -c1-330
    done
  done
done
