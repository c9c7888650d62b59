// Device queries and error descriptions, called the way an application calls libcuda.
//
// Not covered: CUDA_ERROR_NOT_INITIALIZED before cuInit. Tests share one process, and once any
// test has called cuInit there is no going back to an uninitialized driver.
#define XCUDA_EXPORTED_NAMES_ONLY
#include "xcuda/cuda.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace {

// --- Errors: these answer without cuInit. ---

TEST(ErrorApi, KnownCodesHaveTheirEnumeratorNames) {
  struct Expected {
    CUresult code;
    const char* name;
  };
  const Expected samples[] = {
      {CUDA_SUCCESS, "CUDA_SUCCESS"},
      {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
      {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"},
      {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE"},
      {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX"},
      {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS"},
      {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED"},
      {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED"},
      {CUDA_ERROR_KEY_ROTATION, "CUDA_ERROR_KEY_ROTATION"},
      {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN"},
  };
  for (const Expected& sample : samples) {
    const char* name = nullptr;
    const char* description = nullptr;
    ASSERT_EQ(cuGetErrorName(sample.code, &name), CUDA_SUCCESS) << sample.name;
    EXPECT_STREQ(name, sample.name);
    ASSERT_EQ(cuGetErrorString(sample.code, &description), CUDA_SUCCESS) << sample.name;
    ASSERT_NE(description, nullptr);
    EXPECT_GT(std::strlen(description), 0u) << sample.name;
  }
}

TEST(ErrorApi, IllegalAddressReadsAsUsersSearchForIt) {
  const char* description = nullptr;
  ASSERT_EQ(cuGetErrorString(CUDA_ERROR_ILLEGAL_ADDRESS, &description), CUDA_SUCCESS);
  EXPECT_STREQ(description, "an illegal memory access was encountered");
}

TEST(ErrorApi, UnknownCodeIsInvalidValueAndClearsTheOutput) {
  const auto unknown = static_cast<CUresult>(12345);
  const char* name = "untouched";
  const char* description = "untouched";
  EXPECT_EQ(cuGetErrorName(unknown, &name), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(name, nullptr);
  EXPECT_EQ(cuGetErrorString(unknown, &description), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(description, nullptr);
}

TEST(ErrorApi, NullOutputIsInvalidValue) {
  EXPECT_EQ(cuGetErrorName(CUDA_SUCCESS, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGetErrorString(CUDA_SUCCESS, nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST(ErrorApi, EveryNamedCodeIsDescribed) {
  int named = 0;
  for (int value = 0; value <= 1000; ++value) {
    const auto code = static_cast<CUresult>(value);
    const char* name = nullptr;
    const char* description = nullptr;
    CUresult name_result = cuGetErrorName(code, &name);
    ASSERT_EQ(cuGetErrorString(code, &description), name_result) << value;
    if (name_result != CUDA_SUCCESS) continue;
    ++named;
    EXPECT_EQ(std::strncmp(name, "CUDA_", 5), 0) << value;
    EXPECT_GT(std::strlen(description), 0u) << value;
    EXPECT_STRNE(name, description) << value;
  }
  // The number of CUresult enumerators in CUDA 13.0.
  EXPECT_EQ(named, 101);
}

// --- Devices: these need cuInit. ---

class DeviceApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(cuInit(0), CUDA_SUCCESS); }
  void SetUp() override { ASSERT_EQ(cuDeviceGet(&device_, 0), CUDA_SUCCESS); }

  int attribute(CUdevice_attribute which) const {
    int value = -12345;
    EXPECT_EQ(cuDeviceGetAttribute(&value, which, device_), CUDA_SUCCESS) << which;
    return value;
  }

  CUdevice device_ = -1;
};

TEST_F(DeviceApi, ThereIsOneDevice) {
  int count = 0;
  ASSERT_EQ(cuDeviceGetCount(&count), CUDA_SUCCESS);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(device_, 0);
}

TEST_F(DeviceApi, OutOfRangeOrdinalIsInvalidDevice) {
  const CUdevice missing[] = {1, -1, 1000};
  for (CUdevice ordinal : missing) {
    CUdevice device = -1;
    char name[64];
    CUuuid uuid;
    size_t bytes = 0;
    int value = 0;
    int major = 0;
    int minor = 0;
    EXPECT_EQ(cuDeviceGet(&device, ordinal), CUDA_ERROR_INVALID_DEVICE) << ordinal;
    EXPECT_EQ(cuDeviceGetName(name, sizeof name, ordinal), CUDA_ERROR_INVALID_DEVICE);
    EXPECT_EQ(cuDeviceGetUuid_v2(&uuid, ordinal), CUDA_ERROR_INVALID_DEVICE);
    EXPECT_EQ(cuDeviceTotalMem_v2(&bytes, ordinal), CUDA_ERROR_INVALID_DEVICE);
    EXPECT_EQ(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, ordinal),
              CUDA_ERROR_INVALID_DEVICE);
    EXPECT_EQ(cuDeviceComputeCapability(&major, &minor, ordinal), CUDA_ERROR_INVALID_DEVICE);
    EXPECT_EQ(cuDeviceGetPCIBusId(name, sizeof name, ordinal), CUDA_ERROR_INVALID_DEVICE);
    EXPECT_EQ(cuDeviceCanAccessPeer(&value, device_, ordinal), CUDA_ERROR_INVALID_DEVICE);
    EXPECT_EQ(cuDeviceCanAccessPeer(&value, ordinal, device_), CUDA_ERROR_INVALID_DEVICE);
  }
}

TEST_F(DeviceApi, NullOutputsAreInvalidValue) {
  char text[64];
  int value = 0;
  CUdevice found = -1;
  EXPECT_EQ(cuDeviceGet(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetCount(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetName(nullptr, sizeof text, device_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetName(text, 0, device_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetUuid(nullptr, device_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetUuid_v2(nullptr, device_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceTotalMem(nullptr, device_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceTotalMem_v2(nullptr, device_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetAttribute(nullptr, CU_DEVICE_ATTRIBUTE_WARP_SIZE, device_),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceComputeCapability(nullptr, &value, device_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceComputeCapability(&value, nullptr, device_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetProperties(nullptr, device_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetPCIBusId(nullptr, sizeof text, device_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetPCIBusId(text, 0, device_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetByPCIBusId(nullptr, "0000:00:00.0"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetByPCIBusId(&found, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceCanAccessPeer(nullptr, device_, device_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetTexture1DLinearMaxWidth(nullptr, CU_AD_FORMAT_FLOAT, 1, device_),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetExecAffinitySupport(nullptr, CU_EXEC_AFFINITY_TYPE_SM_COUNT, device_),
            CUDA_ERROR_INVALID_VALUE);
}

TEST_F(DeviceApi, NameIsNonEmptyAndTruncatesToTheBuffer) {
  char name[256];
  ASSERT_EQ(cuDeviceGetName(name, sizeof name, device_), CUDA_SUCCESS);
  const std::string full = name;
  ASSERT_FALSE(full.empty());

  char shortened[4];
  std::memset(shortened, 'x', sizeof shortened);
  ASSERT_EQ(cuDeviceGetName(shortened, sizeof shortened, device_), CUDA_SUCCESS);
  EXPECT_EQ(std::string(shortened), full.substr(0, sizeof shortened - 1));
}

TEST_F(DeviceApi, BothUuidRevisionsAgree) {
  CUuuid original;
  CUuuid revised;
  ASSERT_EQ(cuDeviceGetUuid(&original, device_), CUDA_SUCCESS);
  ASSERT_EQ(cuDeviceGetUuid_v2(&revised, device_), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(original.bytes, revised.bytes, sizeof original.bytes), 0);
}

TEST_F(DeviceApi, TotalMemoryInBothWidths) {
  size_t bytes = 0;
  unsigned int narrow_bytes = 0;
  ASSERT_EQ(cuDeviceTotalMem_v2(&bytes, device_), CUDA_SUCCESS);
  ASSERT_EQ(cuDeviceTotalMem(&narrow_bytes, device_), CUDA_SUCCESS);
  EXPECT_GT(bytes, 0u);
  EXPECT_EQ(narrow_bytes, std::min<size_t>(bytes, std::numeric_limits<unsigned int>::max()));
}

TEST_F(DeviceApi, ReportsAnAmpereShapedDevice) {
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE), 32);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 1024);
  EXPECT_GE(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), 1);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING), 1);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY), 1);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_MODE), CU_COMPUTEMODE_DEFAULT);
}

TEST_F(DeviceApi, ComputeCapabilityDefaultsToSm86) {
  int major = 0;
  int minor = 0;
  ASSERT_EQ(cuDeviceComputeCapability(&major, &minor, device_), CUDA_SUCCESS);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR), major);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR), minor);
  if (std::getenv("XCUDA_CC") != nullptr) GTEST_SKIP() << "XCUDA_CC overrides the default";
  EXPECT_EQ(major, 8);
  EXPECT_EQ(minor, 6);
}

TEST_F(DeviceApi, EveryAttributeAnswers) {
  for (int value = 1; value < CU_DEVICE_ATTRIBUTE_MAX; ++value) {
    int answer = 0;
    EXPECT_EQ(cuDeviceGetAttribute(&answer, static_cast<CUdevice_attribute>(value), device_),
              CUDA_SUCCESS)
        << "attribute " << value;
  }
}

TEST_F(DeviceApi, ValuesOutsideTheAttributeRangeAreInvalid) {
  const int outside[] = {0, -1, CU_DEVICE_ATTRIBUTE_MAX, 12345};
  for (int value : outside) {
    int answer = 0;
    EXPECT_EQ(cuDeviceGetAttribute(&answer, static_cast<CUdevice_attribute>(value), device_),
              CUDA_ERROR_INVALID_VALUE)
        << "attribute " << value;
  }
}

TEST_F(DeviceApi, LegacyPropertiesMatchAttributes) {
  CUdevprop properties;
  ASSERT_EQ(cuDeviceGetProperties(&properties, device_), CUDA_SUCCESS);
  EXPECT_EQ(properties.maxThreadsPerBlock, attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  EXPECT_EQ(properties.maxThreadsDim[0], attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X));
  EXPECT_EQ(properties.maxThreadsDim[2], attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z));
  EXPECT_EQ(properties.maxGridSize[0], attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X));
  EXPECT_EQ(properties.maxGridSize[1], attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y));
  EXPECT_EQ(properties.sharedMemPerBlock,
            attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
  EXPECT_EQ(properties.totalConstantMemory, attribute(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY));
  EXPECT_EQ(properties.SIMDWidth, 32);
  EXPECT_EQ(properties.memPitch, attribute(CU_DEVICE_ATTRIBUTE_MAX_PITCH));
  EXPECT_EQ(properties.regsPerBlock, attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK));
  EXPECT_EQ(properties.clockRate, attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
  EXPECT_EQ(properties.textureAlign, attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT));
}

TEST_F(DeviceApi, PciBusIdRoundTripsInEveryAcceptedForm) {
  char bus_id[32];
  ASSERT_EQ(cuDeviceGetPCIBusId(bus_id, sizeof bus_id, device_), CUDA_SUCCESS);
  const std::string full = bus_id;  // domain:bus:device.function, e.g. 0000:00:00.0
  ASSERT_EQ(full.size(), 12u) << full;
  EXPECT_EQ(full.substr(10), ".0");

  std::string uppercase = full;
  std::transform(uppercase.begin(), uppercase.end(), uppercase.begin(),
                 [](unsigned char letter) { return static_cast<char>(std::toupper(letter)); });
  const std::string forms[] = {
      full,
      uppercase,
      "0000" + full,              // nvidia-smi's eight-digit domain
      full.substr(0, 10),         // no function
      full.substr(5),             // no domain
      full.substr(5, 5),          // neither
  };
  for (const std::string& form : forms) {
    CUdevice found = -1;
    EXPECT_EQ(cuDeviceGetByPCIBusId(&found, form.c_str()), CUDA_SUCCESS) << form;
    EXPECT_EQ(found, device_) << form;
  }
}

TEST_F(DeviceApi, PciBusIdThatIsMalformedOrAbsent) {
  char bus_id[32];
  ASSERT_EQ(cuDeviceGetPCIBusId(bus_id, sizeof bus_id, device_), CUDA_SUCCESS);
  const std::string full = bus_id;

  const std::string malformed[] = {"", "not a bus id", "00", "0000:00:00:00.0", "0000:00:00.",
                                   "0000::00.0", "0000:zz:00.0"};
  for (const std::string& form : malformed) {
    CUdevice found = -1;
    EXPECT_EQ(cuDeviceGetByPCIBusId(&found, form.c_str()), CUDA_ERROR_INVALID_VALUE) << form;
  }

  // The same slot's second function, and a bus the device is not on.
  const std::string other_function = full.substr(0, 11) + "1";
  const std::string other_bus =
      full.substr(0, 5) + (full.substr(5, 2) == "ff" ? "fe" : "ff") + full.substr(7);
  for (const std::string& form : {other_function, other_bus}) {
    CUdevice found = -1;
    EXPECT_EQ(cuDeviceGetByPCIBusId(&found, form.c_str()), CUDA_ERROR_INVALID_DEVICE) << form;
  }
}

TEST_F(DeviceApi, PciBusIdTruncatesToTheBuffer) {
  char full[32];
  char shortened[5];
  ASSERT_EQ(cuDeviceGetPCIBusId(full, sizeof full, device_), CUDA_SUCCESS);
  ASSERT_EQ(cuDeviceGetPCIBusId(shortened, sizeof shortened, device_), CUDA_SUCCESS);
  EXPECT_EQ(std::string(shortened), std::string(full).substr(0, sizeof shortened - 1));
}

TEST_F(DeviceApi, ADeviceIsNotItsOwnPeer) {
  int can_access = -1;
  ASSERT_EQ(cuDeviceCanAccessPeer(&can_access, device_, device_), CUDA_SUCCESS);
  EXPECT_EQ(can_access, 0);

  int value = -1;
  EXPECT_EQ(cuDeviceGetP2PAttribute(&value, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, device_,
                                    device_),
            CUDA_ERROR_INVALID_DEVICE);
}

TEST_F(DeviceApi, LinearTextureWidth) {
  size_t width = 0;
  ASSERT_EQ(cuDeviceGetTexture1DLinearMaxWidth(&width, CU_AD_FORMAT_FLOAT, 4, device_),
            CUDA_SUCCESS);
  EXPECT_GT(width, 0u);
  EXPECT_EQ(cuDeviceGetTexture1DLinearMaxWidth(&width, CU_AD_FORMAT_FLOAT, 3, device_),
            CUDA_ERROR_INVALID_VALUE);
}

TEST_F(DeviceApi, NoExecutionAffinity) {
  int supported = -1;
  ASSERT_EQ(cuDeviceGetExecAffinitySupport(&supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT, device_),
            CUDA_SUCCESS);
  EXPECT_EQ(supported, 0);
  EXPECT_EQ(cuDeviceGetExecAffinitySupport(&supported, CU_EXEC_AFFINITY_TYPE_MAX, device_),
            CUDA_ERROR_INVALID_VALUE);
}

}  // namespace
