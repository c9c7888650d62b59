// Code between two barriers that only some threads run, chosen by threadIdx.x against a
// constant: below it, from it on, beyond the block's width, in a two-dimensional block, with
// the other threads doing something else, and with values that live across the barrier; and
// guards that send the other threads to a barrier while the chosen ones reach a shuffle, or
// out of the kernel. Expected values are computed here thread by thread.
#include "check.h"

#include <vector>

constexpr int kWidth = 96;
constexpr int kHeight = 2;
constexpr int kThreads = kWidth * kHeight;
constexpr int kBlocks = 3;
constexpr int kResults = 6;

__global__ void guarded(const unsigned* in, unsigned* out) {
  __shared__ unsigned staged[kThreads];
  const unsigned x = threadIdx.x, local = threadIdx.x + threadIdx.y * blockDim.x;
  const unsigned global = blockIdx.x * kThreads + local;
  const unsigned value = in[global];
  staged[local] = value;
  __syncthreads();
  if (x < 40) staged[local] += 1;  // the first 40 of each row
  __syncthreads();
  const unsigned after_below = staged[local];
  __syncthreads();
  if (x >= 70) staged[local] *= 3;  // from 70 on
  __syncthreads();
  const unsigned after_above = staged[local];
  __syncthreads();
  if (x < 500) staged[local] ^= 0x55;  // beyond the width: everyone
  __syncthreads();
  const unsigned after_all = staged[local];
  __syncthreads();
  if (x > 1000) staged[local] = 0;  // nobody
  __syncthreads();
  const unsigned after_none = staged[local];
  __syncthreads();
  if (x < 10)
    staged[local] += 7;
  else
    staged[local] += 11;  // the others do something else
  __syncthreads();
  const unsigned after_both = staged[local];
  const unsigned kept = value * 5 + in[(global + 1) % (kThreads * kBlocks)];  // lives across the barrier
  if (x < 20) staged[local] = kept;
  __syncthreads();
  unsigned* mine = out + global * kResults;
  mine[0] = after_below;
  mine[1] = after_above;
  mine[2] = after_all;
  mine[3] = after_none;
  mine[4] = after_both;
  mine[5] = staged[local] + kept;
}

constexpr unsigned kExitThreads = 128;

__global__ void guarded_exits(const unsigned* in, unsigned* out) {
  __shared__ unsigned staged[kExitThreads];
  __shared__ unsigned shuffled[32];
  const unsigned x = threadIdx.x;
  const unsigned global = blockIdx.x * kExitThreads + x;
  staged[x] = in[global];
  __syncthreads();
  if (x < 32) shuffled[x] = __shfl_down_sync(0xffffffffu, staged[x], 3);  // the others wait at the barrier
  __syncthreads();
  const unsigned first = shuffled[x % 32] + staged[(x + 1) % kExitThreads];
  __syncthreads();
  out[2 * global] = first;
  if (x >= 64) return;  // the upper half finishes
  staged[x] += staged[x + 64];
  __syncthreads();
  if (x < 16) return;  // and the lowest 16, after the barrier
  unsigned value = staged[x] + staged[x - 16];
  value += __shfl_down_sync(0xffffffffu, value, 8);  // a full mask over exited lanes, as the H200 allows
  out[2 * global + 1] = value;
}

// The expected outputs of guarded_exits, two per thread (0 where the thread writes none).
std::vector<unsigned> expected_exits(const std::vector<unsigned>& in, int blocks) {
  std::vector<unsigned> expected(in.size() * 2, 0);
  for (int block = 0; block < blocks; ++block) {
    const unsigned* values = in.data() + block * kExitThreads;
    unsigned* results = expected.data() + 2 * block * kExitThreads;
    std::vector<unsigned> summed(64), partial(64);
    for (unsigned x = 0; x < kExitThreads; ++x) {
      const unsigned lane = x % 32;
      results[2 * x] = values[lane + 3 <= 31 ? lane + 3 : lane] + values[(x + 1) % kExitThreads];
    }
    for (unsigned x = 0; x < 64; ++x) summed[x] = values[x] + values[x + 64];
    for (unsigned x = 16; x < 64; ++x) partial[x] = summed[x] + summed[x - 16];
    for (unsigned x = 16; x < 64; ++x) results[2 * x + 1] = partial[x] + (x % 32 + 8 <= 31 ? partial[x + 8] : partial[x]);
  }
  return expected;
}

int main() {
  const int n = kThreads * kBlocks;
  std::vector<unsigned> in(n), out(n * kResults, 0);
  for (int i = 0; i < n; ++i) in[i] = (static_cast<unsigned>(i) * 2654435761u) >> 9;
  unsigned* d_in = nullptr;
  unsigned* d_out = nullptr;
  CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(unsigned)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  guarded<<<kBlocks, dim3(kWidth, kHeight)>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int global = 0; global < n; ++global) {
    const unsigned x = global % kThreads % kWidth;
    unsigned staged = in[global];
    if (x < 40) staged += 1;
    const unsigned below = staged;
    if (x >= 70) staged *= 3;
    const unsigned above = staged;
    staged ^= 0x55;
    const unsigned all = staged;
    const unsigned none = staged;
    staged += x < 10 ? 7 : 11;
    const unsigned both = staged;
    const unsigned kept = in[global] * 5 + in[(global + 1) % n];
    if (x < 20) staged = kept;
    const unsigned expected[kResults] = {below, above, all, none, both, staged + kept};
    for (int result = 0; result < kResults; ++result) {
      if (out[global * kResults + result] == expected[result]) continue;
      if (++failures <= 10)
        std::fprintf(stderr, "thread %d result %d: got %u, expected %u\n", global, result, out[global * kResults + result],
                     expected[result]);
    }
  }
  {
    const int exit_threads = kExitThreads * kBlocks;
    std::vector<unsigned> exit_out(2 * exit_threads);
    CHECK(cudaMemset(d_out, 0, exit_out.size() * sizeof(unsigned)));
    guarded_exits<<<kBlocks, kExitThreads>>>(d_in, d_out);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(exit_out.data(), d_out, exit_out.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    const std::vector<unsigned> expected = expected_exits(std::vector<unsigned>(in.begin(), in.begin() + exit_threads), kBlocks);
    for (size_t index = 0; index < expected.size(); ++index) {
      if (exit_out[index] == expected[index]) continue;
      if (++failures <= 10)
        std::fprintf(stderr, "guarded_exits thread %zu result %zu: got %u, expected %u\n", index / 2, index % 2, exit_out[index],
                     expected[index]);
    }
  }
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  if (failures != 0) {
    std::fprintf(stderr, "%d wrong results\n", failures);
    return 1;
  }
  std::printf("guarded_regions: all results match\n");
  return 0;
}
