// What the Driver API tests of streams, events, launches and contexts share: the primary
// context of device 0 made current, and a module of small kernels written in PTX by hand.
#pragma once

#define XCUDA_EXPORTED_NAMES_ONLY
#include "xcuda/cuda.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>

namespace xcuda::testing {

// spin_until_set(flag, out): each block waits until *flag is non-zero and stores it at
// out[blockIdx.x]; after 2^34 polls it gives up and stores 0, so a failure cannot hang.
// set_flag(flag, value): *flag = value.
// add_one(data, n): data[i] += 1 for i < n.
inline constexpr char kernels_ptx[] = R"PTX(
.version 7.0
.target sm_50
.address_size 64

.visible .entry spin_until_set(.param .u64 flag, .param .u64 out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<3>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [flag];
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u64 %rd3, 0;
POLL:
  ld.volatile.global.u32 %r1, [%rd1];
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  add.u64 %rd3, %rd3, 1;
  setp.lt.u64 %p2, %rd3, 17179869184;
  @%p2 bra POLL;
  mov.u32 %r1, 0;
DONE:
  mov.u32 %r2, %ctaid.x;
  mul.wide.u32 %rd4, %r2, 4;
  add.u64 %rd5, %rd2, %rd4;
  st.global.u32 [%rd5], %r1;
  ret;
}

.visible .entry set_flag(.param .u64 flag, .param .u32 value)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [flag];
  ld.param.u32 %r1, [value];
  cvta.to.global.u64 %rd1, %rd1;
  st.volatile.global.u32 [%rd1], %r1;
  ret;
}

.visible .entry add_one(.param .u64 data, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<7>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [data];
  ld.param.u32 %r1, [n];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.s32 %p1, %r5, %r1;
  @%p1 bra END;
  mul.wide.s32 %rd2, %r5, 4;
  add.u64 %rd3, %rd1, %rd2;
  ld.global.u32 %r6, [%rd3];
  add.u32 %r6, %r6, 1;
  st.global.u32 [%rd3], %r6;
END:
  ret;
}
)PTX";

class DriverApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(cuDeviceGet(&device_, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&context_, device_), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(context_), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (module_) {
      EXPECT_EQ(cuModuleUnload(module_), CUDA_SUCCESS);
    }
    EXPECT_EQ(cuDevicePrimaryCtxRelease_v2(device_), CUDA_SUCCESS);
  }

  CUfunction kernel(const char* name) {
    if (!module_) {
      EXPECT_EQ(cuModuleLoadData(&module_, kernels_ptx), CUDA_SUCCESS);
    }
    CUfunction function = nullptr;
    EXPECT_EQ(cuModuleGetFunction(&function, module_, name), CUDA_SUCCESS) << name;
    return function;
  }

  int attribute(CUdevice_attribute which) {
    int value = -1;
    EXPECT_EQ(cuDeviceGetAttribute(&value, which, device_), CUDA_SUCCESS);
    return value;
  }

  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUmodule module_ = nullptr;
};

// Polls cuStreamQuery until the stream is idle or `limit` has passed: a stuck stream fails the
// test instead of hanging it.
inline CUresult wait_idle(CUstream stream,
                          std::chrono::milliseconds limit = std::chrono::seconds(60)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  CUresult result;
  while ((result = cuStreamQuery(stream)) == CUDA_ERROR_NOT_READY &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return result;
}

}  // namespace xcuda::testing
