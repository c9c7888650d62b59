// Warp-aggregated atomics, the common idiom of a diverged warp: the threads of a data-dependent
// branch take __activemask(), their lowest lane adds the group's count to a shared counter, and
// __shfl_sync over that mask hands each thread its slot, while the warp's other threads already
// wait at the __syncthreads() after the branch. Checked: every chosen thread of a block gets a
// different slot below the block's count, the count is the number of chosen threads, and each
// mask holds its own lane and chosen lanes only (which lanes run together is the hardware's
// choice, so nothing more is assumed).
#include "check.h"

#include <vector>

constexpr int kThreads = 128;
constexpr int kBlocks = 4;
constexpr int kCount = kThreads * kBlocks;
constexpr unsigned kNone = 0xffffffffu;

__device__ bool chosen(unsigned value) { return value % 3 == 0; }

__global__ void aggregate(const unsigned* in, unsigned* block_counts, unsigned* slots, unsigned* masks) {
  __shared__ unsigned block_total;
  if (threadIdx.x == 0) block_total = 0;
  __syncthreads();
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32;
  slots[t] = masks[t] = kNone;
  if (chosen(in[t])) {
    const unsigned mask = __activemask();
    const unsigned leader = __ffs(mask) - 1;
    unsigned base = 0;
    if (lane == leader) base = atomicAdd(&block_total, __popc(mask));
    base = __shfl_sync(mask, base, leader);
    slots[t] = base + __popc(mask & ((1u << lane) - 1));
    masks[t] = mask;
  }
  __syncthreads();
  if (threadIdx.x == 0) block_counts[blockIdx.x] = block_total;
}

int main() {
  std::vector<unsigned> in(kCount);
  for (int i = 0; i < kCount; ++i) in[i] = static_cast<unsigned>(i) * 2654435761u >> 9;
  unsigned *in_device, *counts_device, *slots_device, *masks_device;
  CHECK(cudaMalloc(&in_device, kCount * sizeof(unsigned)));
  CHECK(cudaMalloc(&counts_device, kBlocks * sizeof(unsigned)));
  CHECK(cudaMalloc(&slots_device, kCount * sizeof(unsigned)));
  CHECK(cudaMalloc(&masks_device, kCount * sizeof(unsigned)));
  CHECK(cudaMemcpy(in_device, in.data(), kCount * sizeof(unsigned), cudaMemcpyHostToDevice));
  aggregate<<<kBlocks, kThreads>>>(in_device, counts_device, slots_device, masks_device);
  CHECK_LAUNCH();
  std::vector<unsigned> counts(kBlocks), slots(kCount), masks(kCount);
  CHECK(cudaMemcpy(counts.data(), counts_device, kBlocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(slots.data(), slots_device, kCount * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(masks.data(), masks_device, kCount * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int block = 0; block < kBlocks; ++block) {
    unsigned expected_count = 0;
    std::vector<bool> taken(kThreads, false);
    for (int t = block * kThreads; t < (block + 1) * kThreads; ++t) {
      const bool is_chosen = in[t] % 3 == 0;
      const unsigned lane = t % 32, warp_base = t - lane;
      if (!is_chosen) {
        if (slots[t] != kNone || masks[t] != kNone) FAIL("thread %d was not chosen but has slot %u", t, slots[t]);
        continue;
      }
      ++expected_count;
      if (!(masks[t] >> lane & 1)) FAIL("thread %d: mask 0x%08x lacks its own lane", t, masks[t]);
      for (unsigned other = 0; other < 32; ++other)
        if ((masks[t] >> other & 1) && in[warp_base + other] % 3 != 0)
          FAIL("thread %d: mask 0x%08x holds lane %u, which was not chosen", t, masks[t], other);
      if (slots[t] >= kThreads || taken[slots[t]]) FAIL("thread %d: slot %u out of range or taken twice", t, slots[t]);
      taken[slots[t]] = true;
    }
    if (counts[block] != expected_count) FAIL("block %d: count %u, expected %u", block, counts[block], expected_count);
    for (unsigned slot = 0; slot < expected_count; ++slot)
      if (!taken[slot]) FAIL("block %d: slot %u given to nobody", block, slot);
  }
  std::printf("warp_aggregation: %d blocks, every chosen thread has its own slot\n", kBlocks);
  CHECK(cudaFree(in_device));
  CHECK(cudaFree(counts_device));
  CHECK(cudaFree(slots_device));
  CHECK(cudaFree(masks_device));
  return 0;
}
