// __managed__ variables (nvcc: .global .attribute(.managed)): one copy that host code reads and
// writes directly, without copies, before and after kernels change it (CUDA Programming Guide,
// "Unified Memory Programming": managed variables).
#include "check.h"

#include <cstdio>

__managed__ int counter;
__managed__ float values[256];
__managed__ int initialised = 7;

__global__ void update(int threads) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= threads) return;
  atomicAdd(&counter, 1);
  values[i] = values[i] * 2.0f + initialised;
}

int main() {
  // The host writes first: the variables exist before any kernel runs.
  counter = 5;
  for (int i = 0; i < 256; ++i) values[i] = static_cast<float>(i);
  update<<<2, 128>>>(256);
  CHECK_LAUNCH();
  CHECK(cudaDeviceSynchronize());
  if (counter != 5 + 256) {
    std::fprintf(stderr, "counter is %d, expected %d\n", counter, 5 + 256);
    return 1;
  }
  for (int i = 0; i < 256; ++i) {
    if (values[i] != 2.0f * i + 7.0f) {
      std::fprintf(stderr, "values[%d] is %g, expected %g\n", i, values[i], 2.0f * i + 7.0f);
      return 1;
    }
  }
  // The symbol APIs reach the same variable.
  int copied = 0;
  CHECK(cudaMemcpyFromSymbol(&copied, counter, sizeof(int)));
  int stored = 40;
  CHECK(cudaMemcpyToSymbol(initialised, &stored, sizeof(int)));
  if (copied != 5 + 256 || initialised != 40) {
    std::fprintf(stderr, "symbol copies: %d and %d, expected %d and 40\n", copied, initialised, 5 + 256);
    return 1;
  }
  cudaPointerAttributes attributes{};
  CHECK(cudaPointerGetAttributes(&attributes, &counter));
  if (attributes.type != cudaMemoryTypeManaged) {
    std::fprintf(stderr, "counter's memory type is %d, expected managed (%d)\n", static_cast<int>(attributes.type),
                 static_cast<int>(cudaMemoryTypeManaged));
    return 1;
  }
  std::printf("PASS\n");
  return 0;
}
