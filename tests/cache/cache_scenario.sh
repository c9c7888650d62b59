#!/usr/bin/env bash
# One code-cache scenario on an nvcc-built program that checks its own results (exit 0 = right
# answers). usage: cache_scenario.sh SCENARIO WORK_DIRECTORY PROGRAM
#   second_run  a first run compiles (misses), a second run only hits
#   concurrent  several processes start at once on an empty cache; all succeed, none sees a
#               partial entry, and the cache they leave behind serves a later run
#   corruption  each kind of damage to every entry: detected, logged, recompiled, replaced
#   disabled    XCUDA_CACHE=0 writes nothing and still runs correctly
#   precompiled `xcuda precompile PROGRAM` fills the cache; the first run then only hits
#               (needs XCUDA, the path of the xcuda command, as a fourth argument)
#   dump        XCUDA_DUMP_DIR receives each module's PTX and object, named by its cache key
set -u
scenario=$1 work=$2 program=$3 xcuda=${4:-}
cache=$work/cache
rm -rf "$work" && mkdir -p "$work" || exit 1
export XCUDA_CACHE_DIR=$cache XCUDA_LOG=info
runs=0

fail() { echo "FAIL ($scenario): $*"; exit 1; }

# Runs the program once, its log in $work/log.N; sets $log to that file.
run_program() {
  runs=$((runs + 1))
  log=$work/log.$runs
  XCUDA_LOG_FILE=$log "$program" > "$work/out.$runs" 2>&1 || fail "run $runs exited $? (see $work/out.$runs)"
  touch "$log"
}

expect_in() { grep -q -- "$2" "$1" || fail "'$2' not in $1: $(cat "$1")"; }
expect_not_in() { grep -q -- "$2" "$1" && fail "'$2' in $1: $(cat "$1")"; return 0; }
expect_only_hits() { expect_in "$1" "cache hit"; expect_not_in "$1" "cache miss"; expect_not_in "$1" "damaged"; }

entries() { find "$cache" -name '*.xcc' | sort; }

# Applies damage to byte offsets of a file in place: python3 is a build dependency already.
damage() {
  python3 - "$@" <<'PY'
import sys
kind, path = sys.argv[1], sys.argv[2]
data = bytearray(open(path, 'rb').read())
if kind == 'empty': data = bytearray()
elif kind == 'truncate_header': data = data[:30]
elif kind == 'truncate_payload': data = data[:len(data) - 1]
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
    run_program
    expect_in "$log" "cache miss"
    expect_not_in "$log" "cache hit"
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
  corruption)
    run_program
    for kind in empty truncate_header truncate_payload garbage flip_magic flip_size flip_checksum flip_payload; do
      for entry in $(entries); do damage "$kind" "$entry" || fail "cannot damage $entry"; done
      run_program
      expect_in "$log" "damaged"
      expect_in "$log" "cache miss"
      run_program
      expect_only_hits "$log"
    done
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
    [[ $key =~ ^[0-9a-f]{64}$ ]] || fail "dump name $key is not a cache key"
    [ -f "$cache/$key.xcc" ] || fail "no cache entry named like the dump $key"
    head -c 4 "$work/dump/$key.o" | grep -q "ELF" || fail "$key.o is not an ELF object"
    expect_in "$ptx" ".entry"
    ;;
  *) fail "unknown scenario" ;;
esac
echo "PASS ($scenario): $runs runs"
