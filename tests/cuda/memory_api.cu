// The runtime's memory and device API: cudaMalloc/cudaFree, cudaMemcpy in every direction,
// cudaMemset, cudaMemcpyAsync + cudaDeviceSynchronize, device count and properties, and a launch
// with an invalid configuration whose error is reported by cudaGetLastError but is not sticky.
#include "check.h"

#include <algorithm>
#include <cstring>
#include <vector>

__global__ void add_one(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

int main() {
  // --- Device queries.
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  if (count < 1) FAIL("cudaGetDeviceCount: expected at least 1 device, got %d", count);
  CHECK(cudaSetDevice(0));
  int dev = -1;
  CHECK(cudaGetDevice(&dev));
  if (dev != 0) FAIL("cudaGetDevice: expected 0, got %d", dev);
  cudaDeviceProp prop;
  std::memset(&prop, 0, sizeof prop);
  CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.warpSize != 32) FAIL("warpSize: expected 32, got %d", prop.warpSize);
  if (prop.name[0] == '\0') FAIL("device name is empty");
  if (prop.maxThreadsPerBlock < 1024) FAIL("maxThreadsPerBlock: expected >= 1024, got %d", prop.maxThreadsPerBlock);
  if (prop.totalGlobalMem == 0) FAIL("totalGlobalMem is 0");
  if (prop.multiProcessorCount < 1) FAIL("multiProcessorCount: expected >= 1, got %d", prop.multiProcessorCount);
  int warp_attr = 0;
  CHECK(cudaDeviceGetAttribute(&warp_attr, cudaDevAttrWarpSize, 0));
  if (warp_attr != 32) FAIL("cudaDevAttrWarpSize: expected 32, got %d", warp_attr);

  // --- Malloc, memset, H2D, D2D, D2H.
  const int n = 300001;  // odd byte counts exercise unaligned tails
  const size_t bytes = n * sizeof(int);
  std::vector<int> h(n), back(n), want(n);
  for (int i = 0; i < n; ++i) h[i] = i * 7 - 12345;
  int *d1 = nullptr, *d2 = nullptr;
  CHECK(cudaMalloc(&d1, bytes));
  CHECK(cudaMalloc(&d2, bytes));
  if (d1 == nullptr || d2 == nullptr || d1 == d2) FAIL("cudaMalloc returned %p and %p", (void*)d1, (void*)d2);

  CHECK(cudaMemset(d1, 0x5C, bytes));
  CHECK(cudaMemcpy(back.data(), d1, bytes, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) want[i] = 0x5C5C5C5C;
  expect_equal("cudaMemset 0x5C", back.data(), want.data(), n);

  // memset of a byte range in the middle, not a multiple of 4 bytes long.
  CHECK(cudaMemset(reinterpret_cast<char*>(d1) + 5, 0, 10));
  CHECK(cudaMemcpy(back.data(), d1, 16, cudaMemcpyDeviceToHost));
  {
    unsigned char bytes16[16];
    std::memcpy(bytes16, back.data(), 16);
    for (int k = 0; k < 16; ++k) {
      unsigned char w = (k >= 5 && k < 15) ? 0 : 0x5C;
      if (bytes16[k] != w) FAIL("partial cudaMemset: byte %d: expected 0x%02x, got 0x%02x", k, w, bytes16[k]);
    }
  }

  CHECK(cudaMemcpy(d1, h.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d2, d1, bytes, cudaMemcpyDeviceToDevice));
  std::fill(back.begin(), back.end(), 0);
  CHECK(cudaMemcpy(back.data(), d2, bytes, cudaMemcpyDeviceToHost));
  expect_equal("H2D then D2D then D2H", back.data(), h.data(), n);

  // cudaMemcpyDefault infers the direction from the pointers (unified addressing).
  std::fill(back.begin(), back.end(), 0);
  CHECK(cudaMemcpy(back.data(), d2, bytes, cudaMemcpyDefault));
  expect_equal("cudaMemcpyDefault D2H", back.data(), h.data(), n);

  // Sub-range copy at offsets.
  CHECK(cudaMemcpy(d2 + 10, d1 + 1000, 77 * sizeof(int), cudaMemcpyDeviceToDevice));
  CHECK(cudaMemcpy(back.data(), d2, 100 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 100; ++i) want[i] = (i >= 10 && i < 87) ? h[i - 10 + 1000] : h[i];
  expect_equal("D2D sub-range", back.data(), want.data(), 100);

  // --- Async copies on the default stream, a kernel between them, one synchronize at the end.
  int* pinned = nullptr;
  CHECK(cudaMallocHost(&pinned, bytes));
  for (int i = 0; i < n; ++i) pinned[i] = i ^ 0x3FF;
  CHECK(cudaMemcpyAsync(d1, pinned, bytes, cudaMemcpyHostToDevice, 0));
  add_one<<<(n + 255) / 256, 256>>>(d1, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemsetAsync(d2, 0, bytes, 0));
  CHECK(cudaMemcpyAsync(d2, d1, bytes, cudaMemcpyDeviceToDevice, 0));
  CHECK(cudaMemcpyAsync(back.data(), d2, bytes, cudaMemcpyDeviceToHost, 0));
  CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) want[i] = (i ^ 0x3FF) + 1;
  expect_equal("async H2D -> kernel -> D2D -> D2H", back.data(), want.data(), n);
  CHECK(cudaFreeHost(pinned));

  // --- Invalid launch configurations. With CUDA 13's cudart and driver (580.159, H200), every
  // one of these is reported as cudaErrorInvalidValue (the driver's CUDA_ERROR_INVALID_VALUE from
  // cuLaunchKernel), not cudaErrorInvalidConfiguration as older toolkits did; seen on the real
  // driver, so that is what a drop-in must produce. The error is returned once, then cleared.
  CHECK(cudaGetLastError());  // clean slate
  struct BadLaunch {
    const char* what;
    dim3 grid, block;
    size_t shared;
  };
  const BadLaunch bad[] = {
      {"2048 threads per block", dim3(1), dim3(2048), 0},
      {"1025 threads per block", dim3(1), dim3(1025), 0},
      {"blockDim.z = 65", dim3(1), dim3(1, 1, 65), 0},
      {"an empty grid (gridDim.x = 0)", dim3(0, 1, 1), dim3(32), 0},
      {"an empty block (blockDim.x = 0)", dim3(1), dim3(0, 1, 1), 0},
      {"gridDim.y = 65536", dim3(1, 65536, 1), dim3(1), 0},
      {"1 GiB of dynamic shared memory", dim3(1), dim3(32), size_t{1} << 30},
  };
  for (const BadLaunch& b : bad) {
    add_one<<<b.grid, b.block, b.shared>>>(d1, n);
    cudaError_t err = cudaGetLastError();
    if (err != cudaErrorInvalidValue)
      FAIL("launch with %s: expected cudaErrorInvalidValue (%d), got %s (%d)", b.what,
           static_cast<int>(cudaErrorInvalidValue), cudaGetErrorName(err), static_cast<int>(err));
    err = cudaGetLastError();
    if (err != cudaSuccess)
      FAIL("second cudaGetLastError after the launch with %s: expected cudaSuccess, got %s", b.what,
           cudaGetErrorName(err));
  }
  // Not sticky: the context still works.
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(d1, h.data(), bytes, cudaMemcpyHostToDevice));
  add_one<<<(n + 255) / 256, 256>>>(d1, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(back.data(), d1, bytes, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) want[i] = h[i] + 1;
  expect_equal("launch after the failed launches", back.data(), want.data(), n);

  CHECK(cudaFree(d1));
  CHECK(cudaFree(d2));
  CHECK(cudaFree(nullptr));  // freeing NULL is a no-op
  std::printf("memory_api: device '%s', %d device(s), memcpy/memset/async/error checks ok\n", prop.name, count);
  return 0;
}
