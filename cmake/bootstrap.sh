#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine: install what is missing, build, then either
# run the demo CUDA program through xcuda on the CPU or run the whole test suite.
#   bash cmake/bootstrap.sh demo
#   bash cmake/bootstrap.sh test
set -euo pipefail
cd "$(dirname "$0")/.."
action=${1:-demo}
build=${XCUDA_BUILD_DIR:-build}

packages=(cmake g++ pkg-config llvm-19-dev libzstd-dev liblz4-dev libspdlog-dev libfmt-dev
          libgtest-dev libgmock-dev python3 libamdhip64-5
          pocl-opencl-icd ocl-icd-opencl-dev opencl-c-headers clinfo
          liblld-19-dev libpolly-19-dev libamd-comgr-dev rocm-device-libs)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

# nvcc builds the CUDA test programs; the toolkit is not a Debian package.
export PATH="$PATH:/usr/local/cuda/bin"
if ! command -v nvcc >/dev/null; then
  echo "nvcc not found (expected in /usr/local/cuda/bin): the CUDA test programs need it" >&2
  [ "${CI:-}" = true ] && exit 1
fi

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$(nproc)"

case "$action" in
  demo)
    "$build/bin/xcuda" info
    "$build/bin/xcuda" run -- "$build/tests/cuda/vector_add_default"
    ;;
  test)
    ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
    ;;
  *)
    echo "usage: bash cmake/bootstrap.sh demo|test" >&2
    exit 2
    ;;
esac
