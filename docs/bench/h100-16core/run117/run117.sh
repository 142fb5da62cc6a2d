#!/bin/bash
# Run 117 on the 16-core host: each cull part compares its keys with its own last ones
# (two sorted lists walked together, as the keys are written) instead of reading one slot
# per visible object of a view-wide array of keys by object. Binaries "base" (a2b2e45)
# and "new" (the change); digests at 1 and 16 threads, then paired alternating rounds of
# 600 frames, null backend (ROUNDS and "OBJECTS:THREADS ..." as arguments 2 and 3).
# Step "report" instead runs the full report with the new tree's report binary and the
# demo's digests on Vulkan.
cd "$(dirname "$0")/../../../.."
B=.bench/r117
case "$1" in
ab)
  for b in base new; do for t in 1 16; do echo "$b $t $($B/demo-$b --backend null --digest --frames 3 --threads $t | grep digest | md5sum)"; done; done | tee $OUT/digests.txt
  docs/bench/tools/ab_demo.sh "${2:-6}" 600 "${3:-100000:16 1000000:16 100000:1 1000000:1}" $B base new > $OUT/ab.txt 2>&1
  { python3 docs/bench/tools/paired_ratios.py $OUT/ab.txt demo-base demo-new
    echo "minimums:"; python3 docs/bench/tools/paired_ratios.py $OUT/ab.txt demo-base demo-new min; } | tee $OUT/ratios.txt
  for o in 100000 1000000; do $B/demo-new --backend null --objects $o --frames 600 --threads 16 > $OUT/demo-new-$o-16.txt 2>&1; done
  lscpu > $OUT/machine.txt 2>&1 ;;
report)
  for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
  export WGPU_BACKEND=vulkan
  R=/tmp/r117; mkdir -p $R
  start=$(date +%s); timeout 420 $B/switchyard-bench-report --out $R/full > $R/report-stdout.txt 2> $R/report-stderr.txt; echo "report rc=$? in $(( $(date +%s) - start )) s" >> $R/report-stdout.txt
  { for t in 1 16; do echo "wgpu default t$t $(timeout 60 $B/demo-new --frames 3 --digest --threads $t | grep digest | md5sum)"; done; } > $R/digests-vulkan.txt 2>&1
  tar czf $OUT/run117-report.tgz -C $R .
  cat $R/digests-vulkan.txt; tail -3 $R/report-stdout.txt ;;
esac
