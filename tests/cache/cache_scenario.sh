#!/usr/bin/env bash
# One code-cache scenario on an nvcc-built program that checks its own results (exit 0 = right
# answers). usage: cache_scenario.sh SCENARIO WORK_DIRECTORY PROGRAM [XCUDA]
#   second_run  a first run compiles (misses), a second run only hits
#   concurrent  several processes start at once on an empty cache; all succeed, none sees a
#               partial entry, and the cache they leave behind serves a later run
#   corruption_truncated, corruption_changed
#               each kind of damage (cut short or lengthened; bytes changed in the header, the
#               checksum or the payload, or all garbage) to every entry: detected, logged,
#               recompiled, replaced
#   eviction    XCUDA_CACHE_MAX_SIZE below what the program compiles: the cache never ends a run
#               larger than the limit, and results stay right
#   disabled    XCUDA_CACHE=0 writes nothing and still runs correctly
#   precompiled `xcuda precompile PROGRAM` fills the cache; the first run then only hits
#               (needs XCUDA, the path of the xcuda command, as a fourth argument)
#   dump        XCUDA_DUMP_DIR receives each module's PTX, and each compiled kernel's object and
#               LLVM IR before and after optimisation, named by the module's hash
#   lazy        (PROGRAM = tests/bench/jit_cache's many_kernels, whose argument is how many of
#               its 60 kernels to launch) start-up compiles nothing; launching one kernel
#               compiles that one only
#   eager       (the same program) XCUDA_EAGER=1 compiles all 60 kernels at load, and the
#               entries serve a later lazy run
#   tiered      on an empty cache, the first launches run the quick first tier's code; once the
#               cache holds the optimised objects, the first tier is skipped
# Every scenario but the last runs with tiered compilation off, so that each kernel is one
# optimised compile whose entry the scenario can count.
set -u
scenario=$1 work=$2 program=$3 xcuda=${4:-}
cache=$work/cache
rm -rf "$work" && mkdir -p "$work" || exit 1
export XCUDA_CACHE_DIR=$cache XCUDA_LOG=info XCUDA_TIERED=0
runs=0

fail() { echo "FAIL ($scenario): $*"; exit 1; }

# Runs the program once with the given arguments, its log in $work/log.N; sets $log to that file.
run_program() {
  runs=$((runs + 1))
  log=$work/log.$runs
  XCUDA_LOG_FILE=$log "$program" "$@" > "$work/out.$runs" 2>&1 || fail "run $runs exited $? (see $work/out.$runs)"
  touch "$log"
}

expect_in() { grep -q -- "$2" "$1" || fail "'$2' not in $1: $(cat "$1")"; }
expect_not_in() { grep -q -- "$2" "$1" && fail "'$2' in $1: $(cat "$1")"; return 0; }
expect_only_hits() { expect_in "$1" "cache hit"; expect_not_in "$1" "cache miss"; expect_not_in "$1" "damaged"; }
expect_count() {
  local found
  found=$(grep -c -- "$2" "$1")
  [ "$found" -eq "$3" ] || fail "'$2' $found times in $1, not $3: $(cat "$1")"
}

entries() { find "$cache" -name '*.xcc' | sort; }
cache_bytes() { find "$cache" -name '*.xcc' -printf '%s\n' | awk '{ total += $1 } END { print total + 0 }'; }

# Applies damage to byte offsets of a file in place: python3 is a build dependency already.
damage() {
  python3 - "$@" <<'PY'
import sys
kind, path = sys.argv[1], sys.argv[2]
data = bytearray(open(path, 'rb').read())
if kind == 'empty': data = bytearray()
elif kind == 'truncate_header': data = data[:30]
elif kind == 'header_only': data = data[:56]
elif kind == 'truncate_payload': data = data[:len(data) - 1]
elif kind == 'append': data += b'\0'
elif kind == 'flip_version': data[8] ^= 0x01
elif kind == 'garbage': data = bytearray((i * 131 + 7) % 256 for i in range(len(data)))
elif kind == 'flip_magic': data[2] ^= 0xff
elif kind == 'flip_size': data[16] ^= 0x01
elif kind == 'flip_checksum': data[40] ^= 0x01
elif kind == 'flip_payload': data[len(data) // 2] ^= 0x01
else: sys.exit('unknown damage ' + kind)
open(path, 'wb').write(data)
PY
}

case $scenario in
  second_run)
    # A program that forks or loads its module in several contexts may hit on its first run
    # what it compiled a moment before; it must miss at least once.
    run_program
    expect_in "$log" "cache miss"
    [ -n "$(entries)" ] || fail "nothing was stored in $cache"
    run_program
    expect_only_hits "$log"
    ;;
  concurrent)
    pids=()
    for index in 1 2 3 4 5 6; do
      XCUDA_LOG_FILE=$work/parallel.$index "$program" > "$work/parallel_out.$index" 2>&1 &
      pids+=($!)
    done
    for index in "${!pids[@]}"; do
      wait "${pids[$index]}" || fail "parallel run $((index + 1)) failed: $(cat "$work/parallel_out.$((index + 1))")"
    done
    for index in 1 2 3 4 5 6; do expect_not_in "$work/parallel.$index" "damaged"; done
    [ -z "$(find "$cache" -name '*.tmp')" ] || fail "temporary files left behind"
    run_program
    expect_only_hits "$log"
    ;;
  corruption_*)
    case $scenario in
      corruption_truncated) kinds="empty truncate_header header_only truncate_payload append" ;;
      corruption_changed) kinds="garbage flip_magic flip_version flip_size flip_checksum flip_payload" ;;
      *) fail "unknown scenario" ;;
    esac
    run_program
    for kind in $kinds; do
      for entry in $(entries); do damage "$kind" "$entry" || fail "cannot damage $entry"; done
      run_program
      expect_in "$log" "damaged"
      expect_in "$log" "cache miss"
      run_program
      expect_only_hits "$log"
    done
    ;;
  eviction)
    run_program
    total=$(cache_bytes) count=$(entries | wc -l)
    [ "$count" -ge 2 ] || fail "eviction needs a program with at least 2 compile units, not $count"
    # Room for fewer entries than the program compiles: storing them all must evict, and so must
    # the next run, which misses what was evicted.
    limit=$((total - 1))
    rm -rf "$cache"
    for run in 1 2; do
      XCUDA_CACHE_MAX_SIZE=$limit XCUDA_LOG=debug run_program
      expect_in "$log" "evicted"
      [ "$(cache_bytes)" -le "$limit" ] || fail "cache holds $(cache_bytes) bytes, over the limit $limit"
    done
    # A limit below any entry's size: every entry goes, and the program still runs right.
    XCUDA_CACHE_MAX_SIZE=1 run_program
    [ -z "$(entries)" ] || fail "entries left under a 1-byte limit: $(entries)"
    ;;
  disabled)
    XCUDA_CACHE=0 run_program
    expect_in "$log" "cache off"
    [ ! -e "$cache" ] || fail "XCUDA_CACHE=0 created $cache"
    ;;
  precompiled)
    "$xcuda" precompile "$program" > "$work/precompile" 2>&1 || fail "precompile: $(cat "$work/precompile")"
    expect_in "$work/precompile" "0 already cached, [1-9][0-9]* compiled, 0 failed"
    run_program
    expect_only_hits "$log"
    "$xcuda" precompile "$program" > "$work/precompile" 2>&1 || fail "precompile: $(cat "$work/precompile")"
    expect_in "$work/precompile" " 0 compiled, 0 failed"
    ;;
  dump)
    XCUDA_DUMP_DIR=$work/dump run_program
    ptx=$(find "$work/dump" -name '*.ptx' | head -1)
    [ -n "$ptx" ] || fail "nothing dumped in $work/dump"
    key=$(basename "$ptx" .ptx)
    [[ $key =~ ^[0-9a-f]{64}$ ]] || fail "dump name $key is not a module hash"
    expect_in "$ptx" ".entry"
    expect_in "$log" "module $key"
    # Each kernel launched was compiled (the cache was empty): object and IR, both stages.
    object=$(find "$work/dump" -name "$key*.o" | head -1)
    [ -n "$object" ] || fail "no object dumped for module $key"
    unit=${object%.o}
    head -c 4 "$object" | grep -q "ELF" || fail "$object is not an ELF object"
    expect_in "$unit.unoptimized.ll" "define"
    expect_in "$unit.optimized.ll" "define"
    cmp -s "$unit.unoptimized.ll" "$unit.optimized.ll" && fail "optimisation changed nothing in $unit"
    # A warm run reads objects from the cache: it dumps them, but has no IR to dump.
    rm -rf "$work/dump"
    XCUDA_DUMP_DIR=$work/dump run_program
    [ -f "$object" ] || fail "the warm run dumped no $object"
    [ -z "$(find "$work/dump" -name '*.ll')" ] || fail "the warm run compiled something"
    ;;
  lazy)
    run_program 0
    expect_not_in "$log" "cache miss"
    expect_not_in "$log" "cache hit"
    [ -z "$(entries)" ] || fail "a run launching nothing compiled something"
    run_program 1
    expect_in "$log" "60 kernels, 0 globals, module [0-9a-f]*; compiling each kernel on first use"
    expect_count "$log" "cache miss" 1
    expect_in "$log" "cache miss, kernel _Z9kernel_10PKfPfi (1 of 60)"
    [ "$(entries | wc -l)" -eq 1 ] || fail "one launch stored $(entries | wc -l) entries"
    run_program 1
    expect_count "$log" "cache hit" 1
    expect_not_in "$log" "cache miss"
    ;;
  eager)
    XCUDA_EAGER=1 run_program 1
    expect_in "$log" "every kernel now (XCUDA_EAGER=1)"
    expect_count "$log" "cache miss" 60
    [ "$(entries | wc -l)" -eq 60 ] || fail "eager loading stored $(entries | wc -l) entries, not 60"
    run_program
    expect_count "$log" "cache hit" 60
    expect_not_in "$log" "cache miss"
    ;;
  tiered)
    XCUDA_TIERED=1 run_program
    expect_in "$log" "cache miss, .*, first tier"
    run_program
    XCUDA_TIERED=1 run_program
    expect_only_hits "$log"
    expect_not_in "$log" "first tier"
    ;;
  *) fail "unknown scenario" ;;
esac
echo "PASS ($scenario): $runs runs"
