// Managed memory and the stream-ordered allocator through the runtime API: cudaMallocManaged
// touched by host and kernel with prefetch and advice, cudaMallocAsync/cudaFreeAsync on a
// stream, and an explicit memory pool with its attributes. Expected values are computed on the
// host here.
#include "check.h"

#include <cstdint>
#include <vector>

__global__ void square_plus(int* values, int n, int offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) values[i] = values[i] * values[i] + offset;
}

static void check_managed() {
  const int n = 10000;
  int* values = nullptr;
  CHECK(cudaMallocManaged(&values, n * sizeof(int)));
  for (int i = 0; i < n; ++i) values[i] = i - 5000;

  cudaMemLocation device_location = {};
  device_location.type = cudaMemLocationTypeDevice;
  device_location.id = 0;
  CHECK(cudaMemAdvise(values, n * sizeof(int), cudaMemAdviseSetPreferredLocation, device_location));
  CHECK(cudaMemPrefetchAsync(values, n * sizeof(int), device_location, 0, 0));
  square_plus<<<(n + 255) / 256, 256>>>(values, n, 3);
  CHECK_LAUNCH();
  for (int i = 0; i < n; ++i) {
    long long want = static_cast<long long>(i - 5000) * (i - 5000) + 3;
    if (values[i] != want) FAIL("managed value %d: expected %lld, got %d", i, want, values[i]);
  }

  int preferred = -7;
  CHECK(cudaMemRangeGetAttribute(&preferred, sizeof preferred,
                                 cudaMemRangeAttributePreferredLocation, values, n * sizeof(int)));
  if (preferred != 0) FAIL("preferred location: expected device 0, got %d", preferred);

  cudaPointerAttributes attributes;
  CHECK(cudaPointerGetAttributes(&attributes, values));
  if (attributes.type != cudaMemoryTypeManaged) FAIL("managed memory: type %d", attributes.type);
  CHECK(cudaFree(values));
}

static void check_malloc_async() {
  const int n = 50000;
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<int> host(n), back(n);
  for (int i = 0; i < n; ++i) host[i] = (i * 37) % 1001;
  for (int round = 0; round < 4; ++round) {
    int* device = nullptr;
    CHECK(cudaMallocAsync(&device, n * sizeof(int), stream));
    CHECK(cudaMemcpyAsync(device, host.data(), n * sizeof(int), cudaMemcpyHostToDevice, stream));
    square_plus<<<(n + 255) / 256, 256, 0, stream>>>(device, n, round);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(back.data(), device, n * sizeof(int), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaFreeAsync(device, stream));
    CHECK(cudaStreamSynchronize(stream));
    for (int i = 0; i < n; ++i)
      if (back[i] != host[i] * host[i] + round)
        FAIL("round %d value %d: expected %d, got %d", round, i, host[i] * host[i] + round,
             back[i]);
  }
  CHECK(cudaStreamDestroy(stream));
}

static void check_pool() {
  cudaMemPoolProps properties = {};
  properties.allocType = cudaMemAllocationTypePinned;
  properties.location.type = cudaMemLocationTypeDevice;
  properties.location.id = 0;
  cudaMemPool_t pool;
  CHECK(cudaMemPoolCreate(&pool, &properties));
  uint64_t threshold = 64 << 20;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));

  void* first = nullptr;
  CHECK(cudaMallocFromPoolAsync(&first, 1 << 20, pool, 0));
  uint64_t used = 0;
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  if (used < (1u << 20))
    FAIL("pool used memory: expected at least 1 MiB, got %llu",
         static_cast<unsigned long long>(used));
  CHECK(cudaFreeAsync(first, 0));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  if (used != 0) FAIL("pool used memory after free: %llu", static_cast<unsigned long long>(used));
  uint64_t reserved = 0;
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  if (reserved < (1u << 20)) FAIL("freed memory below the threshold was not kept");
  CHECK(cudaMemPoolTrimTo(pool, 0));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  if (reserved != 0)
    FAIL("cudaMemPoolTrimTo(0) kept %llu bytes", static_cast<unsigned long long>(reserved));

  cudaMemPool_t default_pool;
  CHECK(cudaDeviceGetDefaultMemPool(&default_pool, 0));
  if (default_pool == pool) FAIL("the default pool is the new pool");
  CHECK(cudaMemPoolDestroy(pool));
}

int main() {
  CHECK(cudaSetDevice(0));
  check_managed();
  check_malloc_async();
  check_pool();
  std::printf("memory_managed_pools: ok\n");
  return 0;
}
