#!/usr/bin/env bash
# `xcuda run` on a program whose DT_RPATH names a directory holding NVIDIA's stub libcuda.so.1,
# which answers every call with CUDA_ERROR_STUB_LIBRARY. An RPATH outranks LD_LIBRARY_PATH, so
# only the LD_AUDIT library can bring in xcuda's libcuda.so.1.
# usage: run_with_rpath.sh XCUDA PROGRAM LIBRARY_DIRECTORY WORK_DIRECTORY
set -u
xcuda=$1 program=$2 libraries=$3 work=$4
rm -rf "$work" && mkdir -p "$work" || exit 1
export XCUDA_CACHE_DIR=$work/cache
# Without the audit library the stub must win, or this test would prove nothing.
if LD_LIBRARY_PATH=$libraries "$program" > "$work/without_audit" 2>&1; then
  echo "FAIL: $program ran without LD_AUDIT; its RPATH does not reach the stub: $(cat "$work/without_audit")"
  exit 1
fi
"$xcuda" run -- "$program" || { echo "FAIL: xcuda run -- $program exited $?"; exit 1; }
echo "PASS (rpath)"
