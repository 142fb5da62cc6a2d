#!/bin/bash
# Run 25, third loan: is the streamed job graph's tail the upload thread taking a core
# from the workers? The new binary, still against streamed, at 16 and at 14 workers,
# alternating, three rounds; summary rows only.
B=.bench/bin/demo-new
pick() { grep -E "^\| (frame \(cpu\)|  of it: (setup|job graph)[^|]*) |frames/s|^stream: [0-9]"; }
for round in 1 2 3; do
  for threads in 16 14; do
    for mode in static stream; do
      args="--objects 1000000 --threads $threads --frames 600 --warm-up"
      [ $mode = stream ] && args="$args --stream --stream-mb 0.723"
      echo "== $threads threads $mode round $round"
      $B $args --out /tmp/x.png 2>&1 | pick | cut -c1-160
    done
  done
done
