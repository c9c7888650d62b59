// Virtual memory management on the host backend, called as an application calls libcuda: one
// physical allocation mapped at two addresses, kernels and copies through either, the queries
// that describe mapped memory, and the lifetime rules (memory outlives its released handle while
// mapped). Expected error codes are those NVIDIA's driver answers on an H200, recorded by
// tests/cuda/virtual_memory.cu, which runs the same way against both.
#include "tests/unit/driver_api_fixture.h"

#include <unistd.h>

#include <cstring>
#include <vector>

namespace xcuda::testing {
namespace {

class VirtualMemoryApi : public DriverApiTest {
 protected:
  void SetUp() override {
    DriverApiTest::SetUp();
    properties_.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    properties_.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    properties_.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    ASSERT_EQ(cuMemGetAllocationGranularity(&granularity_, &properties_,
                                            CU_MEM_ALLOC_GRANULARITY_MINIMUM),
              CUDA_SUCCESS);
    ASSERT_GT(granularity_, 0u);
  }

  // Reserves `slots` granules and maps `handle` at each of them, readable and writable.
  CUdeviceptr map_repeatedly(CUmemGenericAllocationHandle handle, size_t slots) {
    CUdeviceptr base = 0;
    EXPECT_EQ(cuMemAddressReserve(&base, slots * granularity_, 0, 0, 0), CUDA_SUCCESS);
    for (size_t slot = 0; slot < slots; ++slot)
      EXPECT_EQ(cuMemMap(base + slot * granularity_, granularity_, 0, handle, 0), CUDA_SUCCESS);
    CUmemAccessDesc access{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    EXPECT_EQ(cuMemSetAccess(base, slots * granularity_, &access, 1), CUDA_SUCCESS);
    return base;
  }

  CUmemAllocationProp properties_{};
  size_t granularity_ = 0;
};

TEST_F(VirtualMemoryApi, DeviceReportsVirtualMemoryAndFileDescriptorHandles) {
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED), 1);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED), 1);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED), 1);
}

TEST_F(VirtualMemoryApi, OnePhysicalAllocationIsTheSameMemoryAtEveryAddress) {
  CUmemGenericAllocationHandle handle = 0;
  ASSERT_EQ(cuMemCreate(&handle, granularity_, &properties_, 0), CUDA_SUCCESS);
  CUdeviceptr base = map_repeatedly(handle, 3);

  // A device pointer is a host pointer on this backend: a write through one mapping is read
  // through the others at once.
  auto* first = reinterpret_cast<unsigned*>(base);
  auto* third = reinterpret_cast<unsigned*>(base + 2 * granularity_);
  first[10] = 0xABCD;
  EXPECT_EQ(third[10], 0xABCDu);

  const unsigned count = static_cast<unsigned>(granularity_ / sizeof(unsigned));
  ASSERT_EQ(cuMemsetD32_v2(base + granularity_, 41, count), CUDA_SUCCESS);
  CUdeviceptr data = base + 2 * granularity_;
  unsigned n = count;
  void* arguments[] = {&data, &n};
  ASSERT_EQ(cuLaunchKernel(kernel("add_one"), count / 256, 1, 1, 256, 1, 1, 0, nullptr, arguments,
                           nullptr),
            CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  std::vector<unsigned> seen(count);
  ASSERT_EQ(cuMemcpyDtoH_v2(seen.data(), base, granularity_), CUDA_SUCCESS);
  EXPECT_EQ(seen.front(), 42u);
  EXPECT_EQ(seen.back(), 42u);

  EXPECT_EQ(cuMemUnmap(base, 3 * granularity_), CUDA_SUCCESS);
  EXPECT_EQ(cuMemRelease(handle), CUDA_SUCCESS);
  EXPECT_EQ(cuMemAddressFree(base, 3 * granularity_), CUDA_SUCCESS);
}

TEST_F(VirtualMemoryApi, PointerQueriesDescribeTheMappingHoldingTheAddress) {
  CUmemGenericAllocationHandle handle = 0;
  ASSERT_EQ(cuMemCreate(&handle, granularity_, &properties_, 0), CUDA_SUCCESS);
  CUdeviceptr base = map_repeatedly(handle, 2);
  CUdeviceptr second = base + granularity_;

  CUdeviceptr range_base = 0;
  size_t range_size = 0;
  ASSERT_EQ(cuMemGetAddressRange_v2(&range_base, &range_size, second + 77), CUDA_SUCCESS);
  EXPECT_EQ(range_base, second);
  EXPECT_EQ(range_size, granularity_);
  unsigned memory_type = 0;
  ASSERT_EQ(cuPointerGetAttribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, second),
            CUDA_SUCCESS);
  EXPECT_EQ(memory_type, static_cast<unsigned>(CU_MEMORYTYPE_DEVICE));
  int ordinal = -1;
  ASSERT_EQ(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, second),
            CUDA_SUCCESS);
  EXPECT_EQ(ordinal, 0);
  // Not memory from cuMemAlloc: cuMemFree refuses it.
  EXPECT_EQ(cuMemFree_v2(base), CUDA_ERROR_INVALID_VALUE);

  EXPECT_EQ(cuMemUnmap(base, 2 * granularity_), CUDA_SUCCESS);
  EXPECT_EQ(cuMemGetAddressRange_v2(&range_base, &range_size, second), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(cuMemRelease(handle), CUDA_SUCCESS);
  EXPECT_EQ(cuMemAddressFree(base, 2 * granularity_), CUDA_SUCCESS);
}

TEST_F(VirtualMemoryApi, MappedMemoryIsUnreachableUntilAccessIsGranted) {
  CUmemGenericAllocationHandle handle = 0;
  ASSERT_EQ(cuMemCreate(&handle, granularity_, &properties_, 0), CUDA_SUCCESS);
  CUdeviceptr base = 0;
  ASSERT_EQ(cuMemAddressReserve(&base, granularity_, 0, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemMap(base, granularity_, 0, handle, 0), CUDA_SUCCESS);
  unsigned value = 0;
  EXPECT_EQ(cuMemcpyDtoH_v2(&value, base, sizeof value), CUDA_ERROR_INVALID_VALUE);
  CUmemAccessDesc access{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  ASSERT_EQ(cuMemSetAccess(base, granularity_, &access, 1), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyDtoH_v2(&value, base, sizeof value), CUDA_SUCCESS);
  EXPECT_EQ(value, 0u);  // new physical memory reads as zeros
  EXPECT_EQ(cuMemUnmap(base, granularity_), CUDA_SUCCESS);
  EXPECT_EQ(cuMemRelease(handle), CUDA_SUCCESS);
  EXPECT_EQ(cuMemAddressFree(base, granularity_), CUDA_SUCCESS);
}

TEST_F(VirtualMemoryApi, ImportedDescriptorKeepsTheMemoryAfterEveryOtherHandleIsGone) {
  CUmemGenericAllocationHandle handle = 0;
  ASSERT_EQ(cuMemCreate(&handle, granularity_, &properties_, 0), CUDA_SUCCESS);
  CUdeviceptr first = map_repeatedly(handle, 1);
  ASSERT_EQ(cuMemsetD8_v2(first, 0x5A, granularity_), CUDA_SUCCESS);
  int descriptor = -1;
  ASSERT_EQ(cuMemExportToShareableHandle(&descriptor, handle,
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_SUCCESS);
  EXPECT_EQ(cuMemUnmap(first, granularity_), CUDA_SUCCESS);
  EXPECT_EQ(cuMemRelease(handle), CUDA_SUCCESS);
  EXPECT_EQ(cuMemAddressFree(first, granularity_), CUDA_SUCCESS);

  CUmemGenericAllocationHandle imported = 0;
  ASSERT_EQ(cuMemImportFromShareableHandle(
                &imported, reinterpret_cast<void*>(static_cast<uintptr_t>(descriptor)),
                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
            CUDA_SUCCESS);
  close(descriptor);
  CUdeviceptr second = map_repeatedly(imported, 1);
  unsigned char byte = 0;
  ASSERT_EQ(cuMemcpyDtoH_v2(&byte, second + granularity_ - 1, 1), CUDA_SUCCESS);
  EXPECT_EQ(byte, 0x5A);
  EXPECT_EQ(cuMemUnmap(second, granularity_), CUDA_SUCCESS);
  EXPECT_EQ(cuMemRelease(imported), CUDA_SUCCESS);
  EXPECT_EQ(cuMemAddressFree(second, granularity_), CUDA_SUCCESS);
}

// NVIDIA's driver answers CUDA_ERROR_UNKNOWN to a descriptor that is not its memory.
TEST_F(VirtualMemoryApi, ForeignDescriptorsAreRefused) {
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  CUmemGenericAllocationHandle imported = 0;
  EXPECT_EQ(cuMemImportFromShareableHandle(
                &imported, reinterpret_cast<void*>(static_cast<uintptr_t>(pipe_ends[0])),
                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
            CUDA_ERROR_UNKNOWN);
  close(pipe_ends[0]);
  close(pipe_ends[1]);
}

// Where NVIDIA's driver crashes (it dereferences what it is given), xcuda answers an error.
TEST_F(VirtualMemoryApi, NullPointersAndMadeUpHandlesAreErrors) {
  CUmemGenericAllocationHandle handle = 0;
  EXPECT_EQ(cuMemCreate(nullptr, granularity_, &properties_, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemCreate(&handle, granularity_, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemAddressReserve(nullptr, granularity_, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemRelease(0x7777), CUDA_ERROR_INVALID_VALUE);
  CUmemAllocationProp described{};
  EXPECT_EQ(cuMemGetAllocationPropertiesFromHandle(&described, 0x7777), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr base = 0;
  ASSERT_EQ(cuMemAddressReserve(&base, granularity_, 0, 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuMemMap(base, granularity_, 0, 0x7777, 0), CUDA_ERROR_INVALID_HANDLE);
  CUmemAccessDesc access{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  EXPECT_EQ(cuMemSetAccess(base, granularity_, nullptr, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemSetAccess(base, granularity_, &access, 1), CUDA_ERROR_INVALID_VALUE);  // unmapped
  EXPECT_EQ(cuMemAddressFree(base, granularity_), CUDA_SUCCESS);
}

TEST_F(VirtualMemoryApi, SmallAllocationsCannotBeSharedBetweenProcesses) {
  CUdeviceptr small = 0, large = 0;
  ASSERT_EQ(cuMemAlloc_v2(&small, 64), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc_v2(&large, 1 << 20), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32_v2(large, 0x01020304, (1 << 20) / 4), CUDA_SUCCESS);
  CUipcMemHandle handle;
  EXPECT_EQ(cuIpcGetMemHandle(&handle, small), CUDA_ERROR_NOT_SUPPORTED);
  // Sharing moves the pages into a file in place: the address and contents stay.
  ASSERT_EQ(cuIpcGetMemHandle(&handle, large), CUDA_SUCCESS);
  unsigned value = 0;
  ASSERT_EQ(cuMemcpyDtoH_v2(&value, large + 4096, sizeof value), CUDA_SUCCESS);
  EXPECT_EQ(value, 0x01020304u);
  CUipcMemHandle again;
  ASSERT_EQ(cuIpcGetMemHandle(&again, large + 100), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(&handle, &again, sizeof handle), 0);
  EXPECT_EQ(cuMemFree_v2(small), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(large), CUDA_SUCCESS);
}

}  // namespace
}  // namespace xcuda::testing
