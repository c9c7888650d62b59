// Code between two barriers that only some threads run, chosen by threadIdx.x against a
// constant: below it, from it on, beyond the block's width, in a two-dimensional block, with
// the other threads doing something else, and with values that live across the barrier.
// Expected values are computed here thread by thread.
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
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  if (failures != 0) {
    std::fprintf(stderr, "%d wrong results\n", failures);
    return 1;
  }
  std::printf("guarded_regions: all results match\n");
  return 0;
}
