#!/bin/bash
# Run 106 on the 16-core host: the one-thread comparison sort of small render-shaped inputs
# (kernels/src/sort/compare.rs), built with its limit COMPARE_MAX at 16k pairs so that every
# size below measures it: `small_sort` (a reused sorter with the comparison path against the
# same sorter without it, and std's sort_unstable_by_key beside them; 15 alternating rounds,
# stable and by value), then `sort_cells` for the report's 16k cells on one thread (the
# comparison path against the baselines). Binaries in .bench/k.tar.xz (bin/, stripped).
cd "$(dirname "$0")/../../../.."
mkdir -p /tmp/k && tar xJf .bench/k.tar.xz -C /tmp/k
B=/tmp/k/bin; R=$OUT
lscpu > $R/machine.txt 2>&1
$B/small_sort 15 256 512 1024 2048 4096 8192 12288 16384 > $R/small_sort.txt 2>&1
cat $R/small_sort.txt
SORT_CELLS=render:16384,coherent:16384,render:4096 $B/sort_cells 15 1 > $R/sort_cells.txt 2>&1
cat $R/sort_cells.txt
