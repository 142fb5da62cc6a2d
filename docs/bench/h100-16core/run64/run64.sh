#!/bin/bash
# Run 64: the report's measurement of the 16k and 64k sort cells (sort16k_probe.rs.txt,
# built as an example of the tree of af6ff11 with the probe patch of run 61:
# PROBE_SERIAL_BELOW=N sorts inputs below N pairs on one thread whatever the pool), as
# committed (0) and all on one thread (131072), alternating.
for r in 1 2 3; do
  for below in 0 131072; do
    PROBE_SERIAL_BELOW=$below .bench/bin/sort16k_probe 1 | sed "s/^/below=$below r$r /"
  done
done
