// Warp votes and matches as CUDA documents them: __ballot_sync, __all_sync, __any_sync,
// __activemask (in a partial warp and under divergence), __match_any_sync, __reduce_add_sync
// and __reduce_min_sync, on blocks of 48 threads (the second warp has 16 lanes). Expected
// values are computed here lane by lane.
#include "check.h"

#include <vector>

constexpr int kThreads = 48;
constexpr int kBlocks = 2;
constexpr int kResults = 8;

__global__ void votes(const int* in, unsigned* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[t];
  unsigned* mine = out + t * kResults;
  unsigned full = __activemask();
  mine[0] = full;
  mine[1] = __ballot_sync(full, v & 1);
  mine[2] = __all_sync(full, v >= 0) | (__all_sync(full, v & 1) << 1);
  mine[3] = __any_sync(full, v % 7 == 3);
  mine[4] = __match_any_sync(full, v % 5);
#if __CUDA_ARCH__ >= 800
  mine[5] = __reduce_add_sync(full, static_cast<unsigned>(v));
  mine[6] = static_cast<unsigned>(__reduce_min_sync(full, v - 1000));
#else
  // redux.sync needs sm_80: the same answers from one shuffle per active lane.
  unsigned sum = 0;
  int minimum = 1 << 30;
  for (unsigned rest = full; rest != 0; rest &= rest - 1) {
    int other = __shfl_sync(full, v, __ffs(rest) - 1);
    sum += static_cast<unsigned>(other);
    minimum = min(minimum, other - 1000);
  }
  mine[5] = sum;
  mine[6] = static_cast<unsigned>(minimum);
#endif
  mine[7] = 0;
  if (threadIdx.x % 32 < 10) mine[7] = __activemask();
}

int main() {
  const int n = kThreads * kBlocks;
  std::vector<int> in(n);
  std::vector<unsigned> out(n * kResults, 0xdeadbeef);
  for (int i = 0; i < n; ++i) in[i] = static_cast<int>((i * 40503u) % 2000);
  int* d_in = nullptr;
  unsigned* d_out = nullptr;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, n * kResults * sizeof(unsigned)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  votes<<<kBlocks, kThreads>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, n * kResults * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int t = 0; t < n; ++t) {
    int local = t % kThreads, warp = t - local % 32, lane = local % 32;
    int lanes = local < 32 ? 32 : kThreads - 32;
    unsigned members = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
    unsigned ballot = 0, same = 0, sum = 0;
    bool all_odd = true, any_three = false;
    int minimum = 1 << 30;
    for (int k = 0; k < lanes; ++k) {
      int w = in[warp + k];
      if (w & 1) ballot |= 1u << k;
      all_odd = all_odd && (w & 1);
      any_three = any_three || w % 7 == 3;
      if (w % 5 == in[t] % 5) same |= 1u << k;
      sum += static_cast<unsigned>(w);
      minimum = w - 1000 < minimum ? w - 1000 : minimum;
    }
    unsigned want[kResults] = {members, ballot, 1u | (all_odd ? 2u : 0u), any_three ? 1u : 0u,
                               same, sum, static_cast<unsigned>(minimum), lane < 10 ? 0x3ffu : 0u};
    for (int k = 0; k < kResults; ++k)
      if (out[t * kResults + k] != want[k]) FAIL("thread %d result %d: got 0x%x, want 0x%x", t, k, out[t * kResults + k], want[k]);
  }
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  std::printf("warp_vote: %d threads in blocks of %d, all results match\n", n, kThreads);
  return 0;
}
