// Benchmark: median latency of cuMemAlloc + cuMemFree (through the device pool) against the
// backend's raw allocate + release, for the same mixed sizes, measured side by side in one run
// because these machines are shared and noisy. Two patterns: a free right after each allocation,
// and a rolling window of live buffers as a program holding several does. Prints the ratios;
// judges nothing. Usage: allocation_benchmark [rounds]
#define XCUDA_EXPORTED_NAMES_ONLY
#include "xcuda/cuda.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <random>
#include <vector>

#include "runtime/backend.h"

namespace {

using Clock = std::chrono::steady_clock;

// Sizes spread evenly over orders of magnitude, 256 bytes to 64 MiB, as a program's buffers are.
std::vector<size_t> mixed_sizes(size_t count) {
  std::mt19937_64 generator(12345);
  std::uniform_real_distribution<double> exponent(8.0, 26.0);
  std::vector<size_t> sizes(count);
  for (size_t& size : sizes) size = static_cast<size_t>(std::exp2(exponent(generator)));
  return sizes;
}

double median(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "allocation benchmark: %s failed\n", what);
    std::exit(1);
  }
}

struct Medians {
  double pooled;
  double raw;
};

// Times each pair "allocate the next size, free the oldest live buffer" with `window` buffers
// live between pairs, through cuMemAlloc/cuMemFree and through the backend, alternating so both
// see the same machine load. The first round warms both paths up and is not counted.
Medians measure(xcuda::runtime::Backend& backend, const std::vector<size_t>& sizes, size_t rounds,
                size_t window) {
  std::vector<double> pooled, raw;
  std::deque<CUdeviceptr> pooled_live;
  std::deque<void*> raw_live;
  for (size_t round = 0; round <= rounds; ++round) {
    for (size_t size : sizes) {
      auto start = Clock::now();
      CUdeviceptr pointer = 0;
      require(cuMemAlloc_v2(&pointer, size) == CUDA_SUCCESS, "cuMemAlloc");
      pooled_live.push_back(pointer);
      if (pooled_live.size() >= window) {
        require(cuMemFree_v2(pooled_live.front()) == CUDA_SUCCESS, "cuMemFree");
        pooled_live.pop_front();
      }
      auto middle = Clock::now();
      auto block = backend.allocate(0, size);
      require(block.ok(), "backend allocate");
      raw_live.push_back(*block);
      if (raw_live.size() >= window) {
        require(backend.release(0, raw_live.front()).ok(), "backend release");
        raw_live.pop_front();
      }
      auto end = Clock::now();
      if (round == 0) continue;
      pooled.push_back(std::chrono::duration<double, std::nano>(middle - start).count());
      raw.push_back(std::chrono::duration<double, std::nano>(end - middle).count());
    }
  }
  for (CUdeviceptr pointer : pooled_live)
    require(cuMemFree_v2(pointer) == CUDA_SUCCESS, "cuMemFree");
  for (void* block : raw_live) require(backend.release(0, block).ok(), "backend release");
  return {median(pooled), median(raw)};
}

void report(const char* pattern, Medians medians) {
  std::printf("allocation: %s, sizes 256 B to 64 MiB\n", pattern);
  std::printf("allocation:   median cuMemAlloc+cuMemFree %.0f ns, raw backend %.0f ns\n",
              medians.pooled, medians.raw);
  std::printf("allocation:   pooled/raw median ratio %.3f (%.0f%% lower latency)\n",
              medians.pooled / medians.raw, 100.0 * (1.0 - medians.pooled / medians.raw));
}

}  // namespace

int main(int argc, char** argv) {
  size_t rounds = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 20;
  require(cuInit(0) == CUDA_SUCCESS, "cuInit");
  xcuda::runtime::Backend& backend = xcuda::runtime::backend();
  CUcontext context = nullptr;
  require(cuDevicePrimaryCtxRetain(&context, 0) == CUDA_SUCCESS, "cuDevicePrimaryCtxRetain");
  require(cuCtxSetCurrent(context) == CUDA_SUCCESS, "cuCtxSetCurrent");

  std::vector<size_t> sizes = mixed_sizes(200);
  report("immediate pairs (free right after allocate)", measure(backend, sizes, rounds, 1));
  report("rolling window of 16 live buffers", measure(backend, sizes, rounds, 16));
  require(cuDevicePrimaryCtxRelease_v2(0) == CUDA_SUCCESS, "cuDevicePrimaryCtxRelease");
  return 0;
}
