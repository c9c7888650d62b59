// Separate compilation (nvcc -rdc=true): the kernel calls a device function and reads a
// __device__ variable that separate_compilation_functions.cu defines, so cudart registers each
// translation unit's relocatable fatbin and the device-linked image together.
#include <cstdio>

#include "check.h"

__device__ int scale(int x);
extern __device__ int offset;

__global__ void fill(int* out) { out[threadIdx.x] = scale(threadIdx.x) + offset; }

int main() {
  constexpr int threads = 64;
  int* device = nullptr;
  CHECK(cudaMalloc(&device, threads * sizeof(int)));
  fill<<<1, threads>>>(device);
  CHECK_LAUNCH();
  int host[threads];
  CHECK(cudaMemcpy(host, device, sizeof host, cudaMemcpyDeviceToHost));
  for (int i = 0; i < threads; ++i)
    if (host[i] != 3 * i + 7) FAIL("out[%d] = %d, expected %d", i, host[i], 3 * i + 7);
  CHECK(cudaFree(device));
  std::printf("separate_compilation: %d values right\n", threads);
  return 0;
}
