// The warp-shuffle reduction lives in its own translation unit, hence its own CUDA module, so an
// implementation that cannot compile shuffles yet fails only this kernel, not the whole suite.
#include <cstdint>

#include "../common/bench.h"

namespace {

__global__ void reduce_shuffle(const std::uint32_t* input, std::uint32_t* block_sums) {
  __shared__ std::uint32_t warp_sums[bench::block_threads / 32];
  std::uint32_t value = input[blockIdx.x * blockDim.x + threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffU, value, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = value;
  __syncthreads();
  if (threadIdx.x < 32) {
    value = threadIdx.x < bench::block_threads / 32 ? warp_sums[threadIdx.x] : 0;
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffU, value, offset);
    if (threadIdx.x == 0) block_sums[blockIdx.x] = value;
  }
}

}  // namespace

cudaError_t load_reduce_shuffle() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, reduce_shuffle);
}

void launch_reduce_shuffle(const std::uint32_t* input, std::uint32_t* block_sums, unsigned blocks) {
  reduce_shuffle<<<blocks, bench::block_threads>>>(input, block_sums);
}
