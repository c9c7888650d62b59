#!/usr/bin/env bash
# Cold versus warm JIT: the same program run on an empty code cache, then on the cache the first
# run filled. The first launch's latency includes loading (compiling, or reading from the cache)
# its module; the ratio is how much of that the cache saves.
# usage: run_benchmark.sh PROGRAM WORK_DIRECTORY
set -eu
program=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
export XCUDA_CACHE_DIR=$work/cache
first_launch() { grep -o 'first launch [0-9.]* ms' "$1" | grep -o '[0-9.]*'; }
"$program" > "$work/cold"; cat "$work/cold"
"$program" > "$work/warm"; cat "$work/warm"
cold=$(first_launch "$work/cold") warm=$(first_launch "$work/warm")
awk -v cold="$cold" -v warm="$warm" 'BEGIN {
  printf "jit_cache: cold first launch %.1f ms, warm %.1f ms, warm/cold %.3f (%.1f%% less)\n",
         cold, warm, warm / cold, 100 * (1 - warm / cold) }'
