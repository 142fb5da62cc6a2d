#!/bin/bash
# Run 54: what the streamed frames cost the GPU (run 50: 418 against 478 frames/s): the
# demo at 1M objects, 16 threads, 600 frames after warm_up, still, --stream at 0.723 MB a
# frame, and --stream with the blocks' textures made without mips (a probe build,
# demo-nomips: generate_mips false in demo/src/stream.rs), three rotating rounds.
cd "$(dirname "$0")/../../../.."
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export WGPU_BACKEND=vulkan
O=/tmp/run54; mkdir -p $O
for round in 1 2 3; do
  case $round in 1) order="static stream nomips";; 2) order="stream nomips static";; 3) order="nomips static stream";; esac
  for mode in $order; do
    args="--objects 1000000 --threads 16 --frames 600 --warm-up"
    bin=demo-new
    [ $mode != static ] && args="$args --stream --stream-mb 0.723"
    [ $mode = nomips ] && bin=demo-nomips
    .bench/bin/$bin $args --out /tmp/x.png > $O/$mode-r$round.txt 2>&1
    echo "$mode r$round $(grep -E 'frames/s completed' $O/$mode-r$round.txt | sed 's/(the last.*//') $(grep -E '^GPU time of the passes' $O/$mode-r$round.txt) $(grep -E '^stream: [0-9]' $O/$mode-r$round.txt | sed 's/.*uploads \([0-9.]* MB.s\).*/uploads \1/')" >> $O/summary.txt
  done
done
cat $O/summary.txt
tar czf $OUT/run54.tgz -C /tmp run54
