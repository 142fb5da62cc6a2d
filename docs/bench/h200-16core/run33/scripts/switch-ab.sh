#!/bin/bash
# One probe binary without and with an environment switch, alternating rounds, then job
# spans of each at 100k objects on 16 threads. Run 33 used it as
#   switch-ab.sh SY_CULL_FIRST=main probe-first   (cull-first/)
#   switch-ab.sh SY_CRITICAL=main probe-crit      (critical/)
# Run from the checkout's root; the summary is run 31's probe-ab.sh with labels off/on.
SWITCH=$1 BIN=.bench/bin/$2
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
for round in $(seq 1 ${ROUNDS:-12}); do
  $BIN summary | sed "s/^/off r$round /"
  env $SWITCH $BIN summary | sed "s/^/on r$round /"
done > $OUT/ab.txt
sed -n '/^python3/,/^PY$/p' docs/bench/h200-16core/run31/probe-ab.sh | sed "s|\$OUT/ab.txt \${A:-old} \${B:-new}|$OUT/ab.txt off on|" | bash
$BIN spans 100000 16 > $OUT/spans-off.txt
env $SWITCH $BIN spans 100000 16 > $OUT/spans-on.txt
