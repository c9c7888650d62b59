// What NVIDIA's driver answers for a 2D copy whose array side names no array (run on the H200;
// tests/unit/api_memory_test.cpp expects the same from xcuda).
#include <cuda.h>

#include "primary_context.h"

#include <cstdio>
#include <vector>

int main() {
  make_primary_context_current();
  CUdeviceptr memory = 0;
  cuMemAlloc(&memory, 64);
  std::vector<unsigned char> host(256);
  CUDA_MEMCPY2D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_HOST;
  copy.srcHost = host.data();
  copy.srcPitch = 16;
  copy.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  copy.dstPitch = 16;
  copy.WidthInBytes = 16;
  copy.Height = 4;
  std::printf("cuMemcpy2D to a null array: %d\n", static_cast<int>(cuMemcpy2D(&copy)));
  return 0;
}
