// Rectangular memory through the runtime API: cudaMallocPitch + cudaMemcpy2D in every
// direction, cudaMemset2D, cudaMalloc3D + cudaMemcpy3D, a kernel reading pitched rows, and
// cudaHostRegister'd memory with cudaPointerGetAttributes. Expected values come from the same
// operations done on host arrays here.
#include "check.h"

#include <cstring>
#include <vector>

__global__ void scale_rows(float* base, size_t pitch, int width, int height, float factor) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y;
  if (x < width && y < height) {
    float* row = reinterpret_cast<float*>(reinterpret_cast<char*>(base) + y * pitch);
    row[x] *= factor;
  }
}

static void check_pitched_2d() {
  const int width = 37, height = 19;  // floats; odd sizes leave pitch padding
  std::vector<float> host(width * height), back(width * height);
  for (int i = 0; i < width * height; ++i) host[i] = static_cast<float>(i) * 0.5f - 3.0f;

  float* device = nullptr;
  size_t pitch = 0;
  CHECK(cudaMallocPitch(reinterpret_cast<void**>(&device), &pitch, width * sizeof(float), height));
  if (pitch < width * sizeof(float)) FAIL("pitch %zu is smaller than a row", pitch);
  CHECK(cudaMemcpy2D(device, pitch, host.data(), width * sizeof(float), width * sizeof(float),
                     height, cudaMemcpyHostToDevice));
  scale_rows<<<dim3((width + 31) / 32, height), 32>>>(device, pitch, width, height, 2.0f);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy2D(back.data(), width * sizeof(float), device, pitch, width * sizeof(float),
                     height, cudaMemcpyDeviceToHost));
  std::vector<float> want(host);
  for (float& value : want) value *= 2.0f;
  expect_equal("cudaMemcpy2D round trip through a kernel", back.data(), want.data(), want.size());

  // Device to device between two pitches, then a 2D fill of a sub-rectangle.
  float* other = nullptr;
  size_t other_pitch = 0;
  CHECK(
      cudaMallocPitch(reinterpret_cast<void**>(&other), &other_pitch, 64 * sizeof(float), height));
  CHECK(cudaMemcpy2D(other, other_pitch, device, pitch, width * sizeof(float), height,
                     cudaMemcpyDeviceToDevice));
  CHECK(cudaMemset2D(other, other_pitch, 0, 3 * sizeof(float), height));
  CHECK(cudaMemcpy2D(back.data(), width * sizeof(float), other, other_pitch, width * sizeof(float),
                     height, cudaMemcpyDeviceToHost));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < 3; ++x) want[y * width + x] = 0.0f;
  expect_equal("cudaMemcpy2D device to device + cudaMemset2D", back.data(), want.data(),
               want.size());

  // A row wider than the destination pitch is an error, and nothing is copied.
  cudaError_t error =
      cudaMemcpy2D(device, pitch, host.data(), pitch + 4, pitch + 4, 2, cudaMemcpyHostToDevice);
  if (error == cudaSuccess) FAIL("cudaMemcpy2D with width > pitch succeeded");
  (void)cudaGetLastError();
  CHECK(cudaFree(other));
  CHECK(cudaFree(device));
}

static void check_3d() {
  const int width = 5, height = 4, depth = 3;  // in ints
  cudaExtent extent = make_cudaExtent(width * sizeof(int), height, depth);
  cudaPitchedPtr device;
  CHECK(cudaMalloc3D(&device, extent));
  std::vector<int> host(width * height * depth), back(width * height * depth, -1);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<int>(i * 31 + 7);

  cudaMemcpy3DParms up = {};
  up.srcPtr = make_cudaPitchedPtr(host.data(), width * sizeof(int), width, height);
  up.dstPtr = device;
  up.extent = extent;
  up.kind = cudaMemcpyHostToDevice;
  CHECK(cudaMemcpy3D(&up));

  // Read back only the middle slice's last two rows, into a packed buffer.
  cudaMemcpy3DParms down = {};
  down.srcPtr = device;
  down.srcPos = make_cudaPos(0, 2, 1);
  down.dstPtr = make_cudaPitchedPtr(back.data(), width * sizeof(int), width, 2);
  down.extent = make_cudaExtent(width * sizeof(int), 2, 1);
  down.kind = cudaMemcpyDeviceToHost;
  CHECK(cudaMemcpy3D(&down));
  expect_equal("cudaMemcpy3D sub-box", back.data(), host.data() + (1 * height + 2) * width,
               2 * width);
  CHECK(cudaFree(device.ptr));
}

static void check_registered_host_memory() {
  const int n = 4096;
  std::vector<int> host(n);
  for (int i = 0; i < n; ++i) host[i] = i ^ 0x55;
  CHECK(cudaHostRegister(host.data(), n * sizeof(int), cudaHostRegisterMapped));
  unsigned int flags = 0;
  CHECK(cudaHostGetFlags(&flags, host.data()));
  if (!(flags & cudaHostRegisterMapped)) FAIL("cudaHostGetFlags: mapped flag missing (%u)", flags);

  cudaPointerAttributes attributes;
  CHECK(cudaPointerGetAttributes(&attributes, host.data() + 10));
  if (attributes.type != cudaMemoryTypeHost) FAIL("registered memory: type %d", attributes.type);
  if (attributes.hostPointer != host.data() + 10) FAIL("registered memory: wrong host pointer");

  int* device = nullptr;
  CHECK(cudaMalloc(&device, n * sizeof(int)));
  CHECK(cudaMemcpy(device, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaPointerGetAttributes(&attributes, device + 5));
  if (attributes.type != cudaMemoryTypeDevice) FAIL("cudaMalloc memory: type %d", attributes.type);
  if (attributes.device != 0) FAIL("cudaMalloc memory: device %d", attributes.device);
  if (attributes.devicePointer != device + 5) FAIL("cudaMalloc memory: wrong device pointer");
  if (attributes.hostPointer != nullptr) FAIL("cudaMalloc memory has a host pointer");

  int stack_value = 0;
  CHECK(cudaPointerGetAttributes(&attributes, &stack_value));
  if (attributes.type != cudaMemoryTypeUnregistered)
    FAIL("unregistered memory: type %d", attributes.type);

  std::vector<int> back(n);
  CHECK(cudaMemcpy(back.data(), device, n * sizeof(int), cudaMemcpyDeviceToHost));
  expect_equal("copy from registered memory", back.data(), host.data(), n);
  CHECK(cudaFree(device));
  CHECK(cudaHostUnregister(host.data()));
  if (cudaHostUnregister(host.data()) != cudaErrorHostMemoryNotRegistered)
    FAIL("second cudaHostUnregister: expected cudaErrorHostMemoryNotRegistered");
  (void)cudaGetLastError();
}

int main() {
  check_pitched_2d();
  check_3d();
  check_registered_host_memory();
  std::printf("memory_pitched: ok\n");
  return 0;
}
