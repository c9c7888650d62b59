#!/usr/bin/env bash
# Cold versus warm JIT: the same program run on an empty code cache, then on the cache the first
# run filled, with lazy loading (the default) and with XCUDA_EAGER=1.
#   JIT time      the log's per-unit times added up: compiling on a miss, reading the entry on
#                 a hit (eager mode compiles units in parallel, so this is more than wall time)
#   first launch  the program's first kernel launch, which includes loading the module and
#                 compiling (or reading) what that launch needs
#   all launches  until every kernel has run once
# usage: run_benchmark.sh PROGRAM WORK_DIRECTORY
set -eu
program=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
export XCUDA_LOG=info

milliseconds() { grep -o "$2 [0-9.]* ms" "$1" | grep -o '[0-9.]*'; }
jit_milliseconds() {
  grep -E 'cache (hit|miss|off), ' "$1" | grep -o '[0-9.]* ms$' |
    awk '{ total += $1 } END { printf "%.1f", total }'
}

for mode in lazy eager; do
  eager=0
  [ "$mode" = eager ] && eager=1
  for state in cold warm; do
    run=$mode.$state
    XCUDA_EAGER=$eager XCUDA_CACHE_DIR=$work/cache.$mode XCUDA_LOG_FILE=$work/$run.log \
      "$program" > "$work/$run.out"
    declare "jit_$state=$(jit_milliseconds "$work/$run.log")"
    declare "first_$state=$(milliseconds "$work/$run.out" 'first launch')"
    declare "all_$state=$(milliseconds "$work/$run.out" 'all launches')"
    echo "$run: $(cat "$work/$run.out")"
  done
  awk -v mode="$mode" -v jc="$jit_cold" -v jw="$jit_warm" -v fc="$first_cold" -v fw="$first_warm" \
      -v ac="$all_cold" -v aw="$all_warm" 'BEGIN {
    printf "jit_cache %s: JIT cold %.1f ms, warm %.1f ms (%.1f%% less); first launch cold %.1f ms, warm %.1f ms; all launches cold %.1f ms, warm %.1f ms\n",
           mode, jc, jw, 100 * (1 - jw / jc), fc, fw, ac, aw }'
done
