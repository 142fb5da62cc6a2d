#!/bin/bash
# Run 52: every job's span in the median frame of the report's frame row (benches/examples/frame_spans.rs,
# the tree of d1b6b5f plus the example), the city on the null backend, 3 views, 300 frames.
for n in 100000 1000000; do for t in 1 8 16; do .bench/bin/frame_spans $n $t 300; done; done
