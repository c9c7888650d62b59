// Named barriers with thread counts, as warp-specialised kernels use them: in each block of 128
// threads, warps 0-1 produce into a shared buffer and warps 2-3 consume it, handing the buffer
// back and forth with bar.arrive (do not wait) and bar.sync (wait) on barriers 1 and 2, each
// counting all 128 threads (PTX ISA, "bar, barrier"). Warps 0-1 also meet alone on barrier 3
// with a count of 64 while the consumers never touch it.
#include "check.h"

#include <vector>

constexpr int kThreads = 128;
constexpr int kHalf = 64;
constexpr int kBlocks = 6;
constexpr int kSteps = 20;

__device__ void barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ void barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

__global__ void pipeline(const int* in, int* out) {
  __shared__ int buffer[kHalf];
  __shared__ int scratch[kHalf];
  const bool producer = threadIdx.x < kHalf;
  const int i = threadIdx.x % kHalf;
  for (int step = 0; step < kSteps; ++step) {
    const int item = (blockIdx.x * kSteps + step) * kHalf;
    if (producer) {
      // The producers combine their values among themselves first: barrier 3 holds only them.
      scratch[i] = in[item + i];
      barrier_sync(3, kHalf);
      int value = scratch[i] + scratch[kHalf - 1 - i];
      barrier_sync(3, kHalf);
      if (step > 0) barrier_sync(2, kThreads);  // the consumers have emptied the buffer
      buffer[i] = value;
      barrier_arrive(1, kThreads);  // the buffer is full
    } else {
      barrier_sync(1, kThreads);  // wait until it is full
      out[item + i] = buffer[(i + 1) % kHalf] * 3;
      if (step + 1 < kSteps) barrier_arrive(2, kThreads);
    }
  }
}

int main() {
  const int n = kBlocks * kSteps * kHalf;
  std::vector<int> in(n), out(n, -1);
  for (int i = 0; i < n; ++i) in[i] = static_cast<int>((i * 2654435761u) >> 20);
  int *d_in = nullptr, *d_out = nullptr;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, n * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  pipeline<<<kBlocks, kThreads>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int item = 0; item < n; item += kHalf)
    for (int i = 0; i < kHalf; ++i) {
      int source = (i + 1) % kHalf;
      int want = (in[item + source] + in[item + kHalf - 1 - source]) * 3;
      if (out[item + i] != want)
        FAIL("item %d lane %d: got %d, want %d", item / kHalf, i, out[item + i], want);
    }
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  std::printf("named_barriers: %d blocks, %d hand-overs each, all results match\n", kBlocks,
              kSteps);
  return 0;
}
