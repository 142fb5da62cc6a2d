#!/bin/bash
# Makes the patched copy of wgpu-core 30.0.2 these experiments used, in DIR (default
# /tmp/wgpu-core-patched), from the crate in cargo's registry and the diff beside this
# script, and prints the lines to append to the workspace's Cargo.toml to build with it
# (an experiment only: never commit them).
set -euo pipefail
dir=${1:-/tmp/wgpu-core-patched}
src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/wgpu-core-30.0.2 | head -1)
rm -rf "$dir"
cp -r "$src" "$dir"
patch -s -d "$dir" -p1 < "$(dirname "$0")/wgpu-core-experiment.diff.txt"
printf '\n[patch.crates-io]\nwgpu-core = { path = "%s" }\n' "$dir"
