// Tiered compilation (runtime/tier_up.h): a kernel goes on giving the same answers while the
// code of its quick first tier is replaced by optimised code, between launches and between the
// blocks of one launch. The kernel mixes what the two tiers build differently: a warp's
// shuffles (lanes side by side in vectors only once optimised), a block barrier, a rounded
// division and a fused multiply-add. Expected values are computed here: IEEE single-precision
// fmaf and division round to nearest even, as fma.rn.f32 and div.rn.f32 do. The first launch
// comes from a thread that then ends, which stops the background compile it started: the later
// launches from the main thread must start it again.
//
// xcuda logs when the optimised code takes over; with XCUDA_LOG_FILE set (by ctest) the program
// launches until that line is there and three more times. Without it (on an NVIDIA GPU, which
// has no such log), or with tiering off (XCUDA_TIERED=0), it launches five times.
#include "check.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

constexpr int kThreads = 256;
constexpr int kBlocks = 2048;
constexpr int kCount = kThreads * kBlocks;

__global__ void mix(const float* in, float* out, unsigned* block_sums) {
  __shared__ unsigned warp_sums[kThreads / 32];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float x = in[i];
  const float y = fmaf(x, 1.5f, -0.25f) / (x + 3.0f);
  out[i] = y;
  unsigned v = __float_as_uint(y) ^ static_cast<unsigned>(i);
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned sum = 0;
    for (int warp = 0; warp < kThreads / 32; ++warp) sum = sum * 31 + warp_sums[warp];
    block_sums[blockIdx.x] = sum;
  }
}

// How often the log says so: the file may hold earlier runs' lines.
static int times_optimised_code_logged(const char* log_path) {
  std::ifstream log(log_path);
  std::stringstream text;
  text << log.rdbuf();
  const std::string all = text.str(), line = "kernel _Z3mixPKfPfPj runs optimised code from now on";
  int count = 0;
  for (size_t at = all.find(line); at != std::string::npos; at = all.find(line, at + 1)) ++count;
  return count;
}

int main() {
  std::vector<float> in(kCount), want(kCount);
  std::vector<unsigned> want_sums(kBlocks);
  for (int i = 0; i < kCount; ++i) {
    // Both signs, exponents from 2^-27 to 2^32, no NaN, whose payload the PTX rules choose.
    unsigned hash = static_cast<unsigned>(i) * 2654435761u;
    unsigned bits = (hash & 0x807fffffu) | ((100u + hash % 60u) << 23);
    std::memcpy(&in[i], &bits, sizeof bits);
    want[i] = std::fmaf(in[i], 1.5f, -0.25f) / (in[i] + 3.0f);
  }
  for (int block = 0; block < kBlocks; ++block) {
    unsigned sum = 0;
    for (int warp = 0; warp < kThreads / 32; ++warp) {
      unsigned v = 0;
      for (int lane = 0; lane < 32; ++lane) {
        int i = block * kThreads + warp * 32 + lane;
        unsigned y;
        std::memcpy(&y, &want[i], sizeof y);
        v += y ^ static_cast<unsigned>(i);
      }
      sum = sum * 31 + v;
    }
    want_sums[block] = sum;
  }
  float *in_device, *out_device;
  unsigned* sums_device;
  CHECK(cudaMalloc(&in_device, kCount * sizeof(float)));
  CHECK(cudaMalloc(&out_device, kCount * sizeof(float)));
  CHECK(cudaMalloc(&sums_device, kBlocks * sizeof(unsigned)));
  CHECK(cudaMemcpy(in_device, in.data(), kCount * sizeof(float), cudaMemcpyHostToDevice));

  const char* tiered = std::getenv("XCUDA_TIERED");
  const char* log_path = tiered && std::strcmp(tiered, "0") == 0 ? nullptr : std::getenv("XCUDA_LOG_FILE");
  std::vector<float> out(kCount);
  std::vector<unsigned> sums(kBlocks);
  auto start = std::chrono::steady_clock::now();
  // Counts up to 3: from -1 once the log has the line; from -2 on every launch without a log.
  int launches = 0, after_switch = log_path ? -1 : -2;
  const int logged_before = log_path ? times_optimised_code_logged(log_path) : 0;
  std::thread first_launch([&] {
    mix<<<kBlocks, kThreads>>>(in_device, out_device, sums_device);
    CHECK_LAUNCH();
  });
  first_launch.join();
  while (after_switch < 3) {
    CHECK(cudaMemset(out_device, 0xff, kCount * sizeof(float)));
    mix<<<kBlocks, kThreads>>>(in_device, out_device, sums_device);
    CHECK_LAUNCH();
    ++launches;
    CHECK(cudaMemcpy(out.data(), out_device, kCount * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(sums.data(), sums_device, kBlocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int i = 0; i < kCount; ++i)
      if (std::memcmp(&out[i], &want[i], sizeof(float)) != 0)
        FAIL("launch %d: out[%d] = %a, expected %a (input %a)", launches, i, out[i], want[i], in[i]);
    expect_equal("block sums", sums.data(), want_sums.data(), kBlocks);
    if (!log_path || after_switch >= 0 || times_optimised_code_logged(log_path) > logged_before) ++after_switch;
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60))
      FAIL("no optimised code after %d launches in 60 s (log: %s)", launches, log_path);
  }
  std::printf("tier_up: %d launches, all right\n", launches);
  CHECK(cudaFree(in_device));
  CHECK(cudaFree(out_device));
  CHECK(cudaFree(sums_device));
  return 0;
}
