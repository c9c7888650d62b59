// Warp shuffles as CUDA documents them: __shfl_sync/_up/_down/_xor with widths 8, 16 and 32,
// partial member masks, a shuffle reduction, and cooperative-groups tiles of 16, on blocks of
// 48 threads (the second warp has 16 lanes). Expected values are computed here from the
// documented lane arithmetic.
#include "check.h"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <vector>

namespace cg = cooperative_groups;

constexpr int kThreads = 48;
constexpr int kBlocks = 3;
constexpr int kResults = 8;  // answers per thread

__global__ void shuffles(const int* in, int* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[t];
  int* mine = out + t * kResults;
  mine[0] = __shfl_sync(0xffffffff, v, 5, 8);
  mine[1] = __shfl_up_sync(0xffffffff, v, 3, 16);
  mine[2] = __shfl_down_sync(0xffffffff, v, 4, 16);
  mine[3] = __shfl_xor_sync(0xffffffff, v, 6, 8);
  mine[4] = __shfl_sync(0xffffffff, v, 31 - (threadIdx.x % 32) % 16, 16);
  // Only the even lanes take part; they read from even lanes only.
  if (threadIdx.x % 2 == 0) mine[5] = __shfl_xor_sync(0x55555555, v, 2);
  // A warp-shuffle reduction of the low 16 bits over each segment of 16.
  int sum = v & 0xffff;
  for (int offset = 8; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffff, sum, offset, 16);
  mine[6] = sum;
  cg::thread_block_tile<16> tile = cg::tiled_partition<16>(cg::this_thread_block());
  mine[7] = cg::reduce(tile, v & 0xff, cg::plus<int>()) + static_cast<int>(tile.thread_rank()) * 1000;
}

int source_lane(int lane, int width, int index) { return lane / width * width + index % width; }

int main() {
  const int n = kThreads * kBlocks;
  std::vector<int> in(n), out(n * kResults, -1);
  for (int i = 0; i < n; ++i) in[i] = static_cast<int>((i * 2654435761u) >> 5);
  int *d_in = nullptr, *d_out = nullptr;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, n * kResults * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_out, out.data(), n * kResults * sizeof(int), cudaMemcpyHostToDevice));
  shuffles<<<kBlocks, kThreads>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, n * kResults * sizeof(int), cudaMemcpyDeviceToHost));
  for (int t = 0; t < n; ++t) {
    int block = t / kThreads * kThreads, local = t % kThreads, warp = block + local / 32 * 32, lane = local % 32;
    auto at = [&](int source) { return in[warp + source]; };
    int want[kResults];
    want[0] = at(source_lane(lane, 8, 5));
    want[1] = lane % 16 >= 3 ? at(lane - 3) : at(lane);
    want[2] = lane % 16 + 4 < 16 ? at(lane + 4) : at(lane);
    want[3] = at(lane ^ 6);
    want[4] = at(source_lane(lane, 16, 31 - lane % 16));
    want[5] = lane % 2 == 0 ? at(lane ^ 2) : -1;
    int sum = 0, low = 0;
    for (int k = 0; k < 16; ++k) {
      sum += at(lane / 16 * 16 + k) & 0xffff;
      low += at(lane / 16 * 16 + k) & 0xff;
    }
    want[6] = sum;
    want[7] = low + (lane % 16) * 1000;
    for (int k = 0; k < kResults; ++k)
      if (out[t * kResults + k] != want[k]) FAIL("thread %d result %d: got %d, want %d", t, k, out[t * kResults + k], want[k]);
  }
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  std::printf("warp_shuffle: %d threads in blocks of %d, all results match\n", n, kThreads);
  return 0;
}
