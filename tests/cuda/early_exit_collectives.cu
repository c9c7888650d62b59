// Warp collectives and block barriers among the threads left after others of the block
// returned: a whole trailing part of the block (the last warp of a reduction), a leading part,
// a cut through the middle of a warp, and the same in a two-dimensional block. Exited lanes take
// no part in a warp collective, even when its member mask names them (CUDA requires only the
// non-exited lanes of the mask to take part): __activemask and a ballot name only the lanes
// left, and the barrier waits only for them. Expected values are computed here lane by lane.
#include "check.h"

#include <vector>

constexpr int kThreads = 96;  // three warps
constexpr int kBlocks = 3;
constexpr int kResults = 4;
constexpr unsigned kUnset = 0xdeadbeef;

// Threads at or above `keep_below` (or below `keep_from`) return at once; the others record the
// warp's active lanes, a ballot, a sum over the active lanes by shuffles in a loop, and, after a
// barrier, a neighbour's value through shared memory.
__global__ void survivors(const unsigned* in, unsigned* out, int keep_from, int keep_below) {
  __shared__ unsigned staged[kThreads];
  const int local = threadIdx.x + threadIdx.y * blockDim.x;
  const int global = blockIdx.x * kThreads + local;
  if (local < keep_from || local >= keep_below) return;
  unsigned* mine = out + global * kResults;
  const unsigned value = in[global];
  const unsigned active = __activemask();
  mine[0] = active;
  mine[1] = __ballot_sync(0xffffffffu, value & 1);
  unsigned sum = 0;
  for (unsigned rest = active; rest != 0; rest &= rest - 1) sum += __shfl_sync(0xffffffffu, value, __ffs(rest) - 1);
  mine[2] = sum;
  staged[local] = value;
  __syncthreads();
  const int neighbour = local + 1 < keep_below ? local + 1 : keep_from;
  mine[3] = staged[neighbour] * 3 + value;
}

// The bench's pattern: each warp reduces by shuffles, warp 0 reduces the warp sums and the
// rest of the block has returned.
__global__ void last_warp_reduction(const unsigned* in, unsigned* sums) {
  __shared__ unsigned warp_sums[kThreads / 32];
  unsigned value = in[blockIdx.x * kThreads + threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = value;
  __syncthreads();
  if (threadIdx.x >= 32) return;
  value = threadIdx.x < kThreads / 32 ? warp_sums[threadIdx.x] : 0;
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  if (threadIdx.x == 0) sums[blockIdx.x] = value;
}


void expect(unsigned got, unsigned expected, const char* what, int thread) {
  if (got == expected) return;
  if (++failures <= 10) std::fprintf(stderr, "%s of thread %d: got %#x, expected %#x\n", what, thread, got, expected);
}

void check_survivors(const std::vector<unsigned>& in, dim3 block, int keep_from, int keep_below) {
  const int n = kThreads * kBlocks;
  unsigned* d_in = nullptr;
  unsigned* d_out = nullptr;
  std::vector<unsigned> out(n * kResults, kUnset);
  CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(unsigned)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_out, out.data(), out.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  survivors<<<kBlocks, block>>>(d_in, d_out, keep_from, keep_below);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int global = 0; global < n; ++global) {
    const int local = global % kThreads, first = global - local;
    const unsigned* mine = &out[global * kResults];
    if (local < keep_from || local >= keep_below) {
      for (int result = 0; result < kResults; ++result) expect(mine[result], kUnset, "result of an exited thread", global);
      continue;
    }
    const int warp_start = local / 32 * 32;
    unsigned active = 0, ballot = 0, sum = 0;
    for (int lane = 0; lane < 32; ++lane) {
      const int peer = warp_start + lane;
      if (peer < keep_from || peer >= keep_below) continue;
      active |= 1u << lane;
      ballot |= (in[first + peer] & 1) << lane;
      sum += in[first + peer];
    }
    const int neighbour = local + 1 < keep_below ? local + 1 : keep_from;
    expect(mine[0], active, "__activemask", global);
    expect(mine[1], ballot, "__ballot_sync", global);
    expect(mine[2], sum, "sum by __shfl_sync", global);
    expect(mine[3], in[first + neighbour] * 3 + in[global], "neighbour after __syncthreads", global);
  }
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
}

int main() {
  const int n = kThreads * kBlocks;
  std::vector<unsigned> in(n);
  for (int i = 0; i < n; ++i) in[i] = (static_cast<unsigned>(i) * 2654435761u) >> 12;

  const dim3 line(kThreads), plane(32, kThreads / 32);
  check_survivors(in, line, 0, 32);   // the first warp is left
  check_survivors(in, line, 0, 40);   // and 8 lanes of the second
  check_survivors(in, line, 8, 96);   // all but the first 8 lanes
  check_survivors(in, line, 40, 70);  // a cut through two warps on both sides
  check_survivors(in, plane, 0, 40);  // the same, the block two-dimensional
  check_survivors(in, plane, 8, 96);

  unsigned* d_in = nullptr;
  unsigned* d_sums = nullptr;
  std::vector<unsigned> sums(kBlocks, kUnset);
  CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_sums, kBlocks * sizeof(unsigned)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  last_warp_reduction<<<kBlocks, kThreads>>>(d_in, d_sums);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(sums.data(), d_sums, kBlocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int block = 0; block < kBlocks; ++block) {
    unsigned sum = 0;
    for (int local = 0; local < kThreads; ++local) sum += in[block * kThreads + local];
    expect(sums[block], sum, "block sum", block);
  }
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_sums));
  if (failures != 0) {
    std::fprintf(stderr, "%d wrong results\n", failures);
    return 1;
  }
  std::printf("early_exit_collectives: all results match\n");
  return 0;
}
