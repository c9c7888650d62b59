// XCUDA_HOST_DEVICES: several host devices sharing out the CPU, with peer access between them.
#include "tests/unit/driver_api_fixture.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace xcuda::testing {
namespace {

// The backend reads the environment once, at cuInit: set it before any test runs.
const bool environment_set = [] {
  setenv("XCUDA_HOST_DEVICES", "2", 1);
  setenv("XCUDA_HOST_THREADS", "6", 1);
  return true;
}();

class HostDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(environment_set);
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  }
  static int attribute(CUdevice_attribute which, CUdevice device) {
    int value = -1;
    EXPECT_EQ(cuDeviceGetAttribute(&value, which, device), CUDA_SUCCESS);
    return value;
  }
};

TEST_F(HostDevices, TwoDevicesShareTheWorkersAndHaveIdentitiesOfTheirOwn) {
  int count = 0;
  ASSERT_EQ(cuDeviceGetCount(&count), CUDA_SUCCESS);
  ASSERT_EQ(count, 2);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0), 3);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1), 3);
  CUuuid uuids[2] = {};
  char names[2][256] = {};
  char buses[2][32] = {};
  for (CUdevice device = 0; device < 2; ++device) {
    ASSERT_EQ(cuDeviceGetName(names[device], sizeof names[device], device), CUDA_SUCCESS);
    EXPECT_NE(std::string(names[device]).find("xcuda"), std::string::npos) << names[device];
    ASSERT_EQ(cuDeviceGetUuid_v2(&uuids[device], device), CUDA_SUCCESS);
    ASSERT_EQ(cuDeviceGetPCIBusId(buses[device], sizeof buses[device], device), CUDA_SUCCESS);
  }
  EXPECT_NE(std::memcmp(uuids[0].bytes, uuids[1].bytes, sizeof uuids[0].bytes), 0);
  EXPECT_STRNE(buses[0], buses[1]);
  CUdevice found = -1;
  ASSERT_EQ(cuDeviceGetByPCIBusId(&found, buses[1]), CUDA_SUCCESS);
  EXPECT_EQ(found, 1);
  CUdevice missing = -1;
  EXPECT_EQ(cuDeviceGet(&missing, 2), CUDA_ERROR_INVALID_DEVICE);
}

TEST_F(HostDevices, EachDeviceReachesTheOthersMemory) {
  int can = -1;
  ASSERT_EQ(cuDeviceCanAccessPeer(&can, 0, 1), CUDA_SUCCESS);
  EXPECT_EQ(can, 1);
  ASSERT_EQ(cuDeviceCanAccessPeer(&can, 1, 1), CUDA_SUCCESS);
  EXPECT_EQ(can, 0) << "a device is not its own peer";
  int value = -1;
  ASSERT_EQ(cuDeviceGetP2PAttribute(&value, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 1, 0),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 1);
  ASSERT_EQ(cuDeviceGetP2PAttribute(&value, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, 0, 1),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 1);
  EXPECT_EQ(cuDeviceGetP2PAttribute(&value, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 0),
            CUDA_ERROR_INVALID_DEVICE);
}

TEST_F(HostDevices, PeerAccessIsEnabledOnceAndAKernelOnOneDeviceUpdatesTheOthersMemory) {
  CUcontext first = nullptr, second = nullptr, first_again = nullptr;
  ASSERT_EQ(cuCtxCreate_v2(&first, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxCreate_v2(&first_again, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxCreate_v2(&second, 0, 1), CUDA_SUCCESS);

  ASSERT_EQ(cuCtxSetCurrent(first), CUDA_SUCCESS);
  constexpr unsigned count = 500;
  CUdeviceptr data = 0;
  ASSERT_EQ(cuMemAlloc_v2(&data, count * sizeof(uint32_t)), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32_v2(data, 10, count), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxEnablePeerAccess(first_again, 0), CUDA_ERROR_PEER_ACCESS_UNSUPPORTED)
      << "both contexts are on device 0";

  ASSERT_EQ(cuCtxSetCurrent(second), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxEnablePeerAccess(first, 1), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuCtxEnablePeerAccess(first, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxEnablePeerAccess(first, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
  CUmodule module = nullptr;
  ASSERT_EQ(cuModuleLoadData(&module, kernels_ptx), CUDA_SUCCESS);
  CUfunction add_one = nullptr;
  ASSERT_EQ(cuModuleGetFunction(&add_one, module, "add_one"), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdevice device = -1;
  ASSERT_EQ(cuStreamGetDevice(stream, &device), CUDA_SUCCESS);
  EXPECT_EQ(device, 1);
  unsigned n = count;
  void* arguments[] = {&data, &n};
  ASSERT_EQ(cuLaunchKernel(add_one, (count + 63) / 64, 1, 1, 64, 1, 1, 0, stream, arguments,
                           nullptr),
            CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  const auto* values = reinterpret_cast<const uint32_t*>(data);
  for (unsigned i = 0; i < count; ++i) ASSERT_EQ(values[i], 11u) << i;
  ASSERT_EQ(cuCtxDisablePeerAccess(first), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxDisablePeerAccess(first), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
  EXPECT_EQ(cuStreamDestroy_v2(stream), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleUnload(module), CUDA_SUCCESS);

  ASSERT_EQ(cuCtxSetCurrent(first), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(data), CUDA_SUCCESS);
  for (CUcontext context : {second, first_again, first})
    EXPECT_EQ(cuCtxDestroy_v2(context), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxEnablePeerAccess(first, 0), CUDA_ERROR_INVALID_CONTEXT);
}

}  // namespace
}  // namespace xcuda::testing
