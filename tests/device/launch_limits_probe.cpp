// What NVIDIA's driver answers for launches beyond a block's limits (run on the H200;
// tests/unit/api_launch_context_test.cpp expects the same from xcuda). Build there with
//   g++ -I/usr/local/cuda/include tests/device/launch_limits_probe.cpp -L/usr/local/cuda/lib64/stubs -lcuda
// On driver 580.159.04 (H200, 2026-12-03) it printed:
//   block 1x1x65: CUDA_ERROR_INVALID_VALUE
//   block 1025x1x1: CUDA_ERROR_INVALID_VALUE
//   block 16x1x64: CUDA_SUCCESS
#include <cuda.h>

#include "primary_context.h"

#include <cstdio>

int main() {
  const char* ptx =
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry empty(.param .u64 data, .param .u32 n)\n{\n  ret;\n}\n";
  make_primary_context_current();
  CUmodule module;
  CUfunction function;
  if (cuModuleLoadData(&module, ptx) != CUDA_SUCCESS || cuModuleGetFunction(&function, module, "empty") != CUDA_SUCCESS) return 1;
  CUdeviceptr data = 0;
  unsigned n = 0;
  void* arguments[] = {&data, &n};
  const unsigned shapes[][3] = {{1, 1, 65}, {1025, 1, 1}, {16, 1, 64}};
  for (const auto& shape : shapes) {
    CUresult result = cuLaunchKernel(function, 1, 1, 1, shape[0], shape[1], shape[2], 0, nullptr, arguments, nullptr);
    const char* name = nullptr;
    cuGetErrorName(result, &name);
    std::printf("block %ux%ux%u: %s\n", shape[0], shape[1], shape[2], name);
  }
  std::printf("synchronize: %d\n", static_cast<int>(cuCtxSynchronize()));
  return 0;
}
