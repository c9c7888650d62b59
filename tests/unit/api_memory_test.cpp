// The memory family called the way an application calls libcuda: rectangular copies and
// fills, registered host memory, pointer attributes, managed-memory hints, and the
// stream-ordered allocator. Expected values are computed here on the host from the CUDA
// documentation's description of each call.
#define XCUDA_EXPORTED_NAMES_ONLY
#include "xcuda/cuda.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

namespace {

class MemoryApi : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&context_, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(context_), CUDA_SUCCESS);
  }
  void TearDown() override { EXPECT_EQ(cuDevicePrimaryCtxRelease_v2(0), CUDA_SUCCESS); }

  CUcontext context_ = nullptr;
};

std::vector<unsigned char> pattern(size_t bytes) {
  std::vector<unsigned char> values(bytes);
  for (size_t i = 0; i < bytes; ++i) values[i] = static_cast<unsigned char>(i * 7 + 3);
  return values;
}

// --- 2D and 3D copies ---

TEST_F(MemoryApi, Copy2DMovesTheSubRectangleBetweenPitchedBuffers) {
  constexpr size_t source_pitch = 40, width = 13, height = 5, x = 3, y = 2;
  std::vector<unsigned char> host = pattern(source_pitch * 8);
  CUdeviceptr device = 0;
  size_t device_pitch = 0;
  ASSERT_EQ(cuMemAllocPitch_v2(&device, &device_pitch, 32, 8, 4), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8_v2(device, 0xEE, device_pitch * 8), CUDA_SUCCESS);

  CUDA_MEMCPY2D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_HOST;
  copy.srcHost = host.data();
  copy.srcPitch = source_pitch;
  copy.srcXInBytes = x;
  copy.srcY = y;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = device;
  copy.dstPitch = device_pitch;
  copy.dstXInBytes = 1;
  copy.dstY = 1;
  copy.WidthInBytes = width;
  copy.Height = height;
  ASSERT_EQ(cuMemcpy2D_v2(&copy), CUDA_SUCCESS);

  std::vector<unsigned char> back(device_pitch * 8);
  ASSERT_EQ(cuMemcpyDtoH_v2(back.data(), device, back.size()), CUDA_SUCCESS);
  for (size_t row = 0; row < 8; ++row) {
    for (size_t column = 0; column < device_pitch; ++column) {
      bool inside = row >= 1 && row < 1 + height && column >= 1 && column < 1 + width;
      unsigned char want = inside ? host[(row - 1 + y) * source_pitch + column - 1 + x] : 0xEE;
      ASSERT_EQ(back[row * device_pitch + column], want) << row << "," << column;
    }
  }
  EXPECT_EQ(cuMemFree_v2(device), CUDA_SUCCESS);
}

TEST_F(MemoryApi, Copy3DAsyncGathersSlicesInStreamOrder) {
  constexpr size_t pitch = 16, rows = 4, depth = 3, width = 10, height = 3;
  std::vector<unsigned char> host = pattern(pitch * rows * depth);
  CUdeviceptr device = 0;
  ASSERT_EQ(cuMemAlloc_v2(&device, width * height * depth), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);

  CUDA_MEMCPY3D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_UNIFIED;  // unregistered host memory through UVA
  copy.srcDevice = reinterpret_cast<CUdeviceptr>(host.data());
  copy.srcPitch = pitch;
  copy.srcHeight = rows;
  copy.srcY = 1;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = device;
  copy.dstPitch = width;
  copy.dstHeight = height;
  copy.WidthInBytes = width;
  copy.Height = height;
  copy.Depth = depth;
  ASSERT_EQ(cuMemcpy3DAsync_v2(&copy, stream), CUDA_SUCCESS);
  std::vector<unsigned char> back(width * height * depth);
  ASSERT_EQ(cuMemcpyDtoHAsync_v2(back.data(), device, back.size(), stream), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  for (size_t z = 0; z < depth; ++z)
    for (size_t row = 0; row < height; ++row)
      for (size_t column = 0; column < width; ++column)
        ASSERT_EQ(back[(z * height + row) * width + column],
                  host[(z * rows + row + 1) * pitch + column]);
  EXPECT_EQ(cuStreamDestroy_v2(stream), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(device), CUDA_SUCCESS);
}

TEST_F(MemoryApi, Copy2DRejectsBadDescriptorsWithoutTouchingMemory) {
  CUdeviceptr device = 0;
  ASSERT_EQ(cuMemAlloc_v2(&device, 64), CUDA_SUCCESS);
  std::vector<unsigned char> host(256);
  CUDA_MEMCPY2D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_HOST;
  copy.srcHost = host.data();
  copy.srcPitch = 16;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = device;
  copy.dstPitch = 16;
  copy.WidthInBytes = 16;
  copy.Height = 5;  // 80 bytes into a 64-byte allocation
  EXPECT_EQ(cuMemcpy2D_v2(&copy), CUDA_ERROR_INVALID_VALUE);
  copy.Height = 4;
  copy.WidthInBytes = 17;  // wider than the pitch
  EXPECT_EQ(cuMemcpy2D_v2(&copy), CUDA_ERROR_INVALID_VALUE);
  copy.WidthInBytes = 16;
  copy.dstMemoryType = CU_MEMORYTYPE_ARRAY;  // with no array: what the H200's driver answered
  EXPECT_EQ(cuMemcpy2D_v2(&copy), CUDA_ERROR_INVALID_VALUE);
  copy.dstMemoryType = static_cast<CUmemorytype>(9);
  EXPECT_EQ(cuMemcpy2D_v2(&copy), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpy2D_v2(nullptr), CUDA_ERROR_INVALID_VALUE);
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  EXPECT_EQ(cuMemcpy2D_v2_ptds(&copy), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(device), CUDA_SUCCESS);
}

TEST_F(MemoryApi, PeerCopiesNeedLiveContexts) {
  CUdeviceptr source = 0, destination = 0;
  ASSERT_EQ(cuMemAlloc_v2(&source, 100), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc_v2(&destination, 100), CUDA_SUCCESS);
  std::vector<unsigned char> values = pattern(100), back(100);
  ASSERT_EQ(cuMemcpyHtoD_v2(source, values.data(), 100), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyPeer(destination, context_, source, context_, 100), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyDtoH_v2(back.data(), destination, 100), CUDA_SUCCESS);
  EXPECT_EQ(back, values);
  EXPECT_EQ(cuMemcpyPeer(destination, nullptr, source, context_, 100), CUDA_ERROR_INVALID_CONTEXT);
  int not_a_context = 0;
  EXPECT_EQ(
      cuMemcpyPeer(destination, reinterpret_cast<CUcontext>(&not_a_context), source, context_, 100),
      CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(cuMemFree_v2(source), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(destination), CUDA_SUCCESS);
}

TEST_F(MemoryApi, Fill2DWritesOnlyTheRectangle) {
  constexpr size_t pitch = 24, width = 5, height = 3;  // width in 16-bit elements
  CUdeviceptr device = 0;
  ASSERT_EQ(cuMemAlloc_v2(&device, pitch * 4), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8_v2(device, 0, pitch * 4), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD2D16_v2(device + pitch, pitch, 0xBEEF, width, height), CUDA_SUCCESS);
  std::vector<uint16_t> back(pitch * 4 / 2);
  ASSERT_EQ(cuMemcpyDtoH_v2(back.data(), device, pitch * 4), CUDA_SUCCESS);
  for (size_t row = 0; row < 4; ++row)
    for (size_t column = 0; column < pitch / 2; ++column)
      ASSERT_EQ(back[row * pitch / 2 + column], (row >= 1 && column < width) ? 0xBEEF : 0)
          << row << "," << column;
  EXPECT_EQ(cuMemsetD2D32_v2(device + 2, pitch, 1, 1, 1), CUDA_ERROR_INVALID_VALUE);  // misaligned
  EXPECT_EQ(cuMemsetD2D8_v2(device, pitch, 1, pitch + 1, 2), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemsetD2D8_v2(device, pitch, 1, pitch, 5), CUDA_ERROR_INVALID_VALUE);  // past the end
  EXPECT_EQ(cuMemFree_v2(device), CUDA_SUCCESS);
}

// --- Registered host memory and pointer attributes ---

TEST_F(MemoryApi, RegisteredHostMemoryKeepsItsFlagsUntilUnregistered) {
  std::vector<unsigned char> host(4096);
  unsigned flags = CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE;
  ASSERT_EQ(cuMemHostRegister_v2(host.data(), host.size(), flags), CUDA_SUCCESS);
  EXPECT_EQ(cuMemHostRegister_v2(host.data() + 100, 10, 0),
            CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  unsigned got = 0;
  ASSERT_EQ(cuMemHostGetFlags(&got, host.data() + 10), CUDA_SUCCESS);
  EXPECT_EQ(got, flags);
  CUdeviceptr mapped = 0;
  ASSERT_EQ(cuMemHostGetDevicePointer_v2(&mapped, host.data(), 0), CUDA_SUCCESS);
  EXPECT_EQ(mapped, reinterpret_cast<CUdeviceptr>(host.data()));
  unsigned type = 0;
  ASSERT_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, mapped), CUDA_SUCCESS);
  EXPECT_EQ(type, CU_MEMORYTYPE_HOST);
  EXPECT_EQ(cuMemHostUnregister(host.data() + 1), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  ASSERT_EQ(cuMemHostUnregister(host.data()), CUDA_SUCCESS);
  EXPECT_EQ(cuMemHostUnregister(host.data()), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  EXPECT_EQ(cuMemHostGetFlags(&got, host.data()), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemHostRegister_v2(host.data(), host.size(), CU_MEMHOSTREGISTER_IOMEMORY),
            CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(cuMemHostRegister_v2(host.data(), host.size(), 0x80), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemHostRegister_v2(host.data(), 0, 0), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(MemoryApi, HostAllocFlagsReadBack) {
  void* host = nullptr;
  ASSERT_EQ(cuMemHostAlloc(&host, 64, CU_MEMHOSTALLOC_WRITECOMBINED), CUDA_SUCCESS);
  unsigned flags = 99;
  ASSERT_EQ(cuMemHostGetFlags(&flags, host), CUDA_SUCCESS);
  EXPECT_EQ(flags, unsigned{CU_MEMHOSTALLOC_WRITECOMBINED});
  EXPECT_EQ(cuMemFreeHost(host), CUDA_SUCCESS);
}

TEST_F(MemoryApi, PointerAttributesDescribeADeviceAllocation) {
  CUdeviceptr device = 0;
  ASSERT_EQ(cuMemAlloc_v2(&device, 1000), CUDA_SUCCESS);
  CUdeviceptr inside = device + 123;
  CUcontext owner = nullptr;
  ASSERT_EQ(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, inside), CUDA_SUCCESS);
  EXPECT_EQ(owner, context_);
  unsigned type = 0;
  ASSERT_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, inside), CUDA_SUCCESS);
  EXPECT_EQ(type, CU_MEMORYTYPE_DEVICE);
  CUdeviceptr start = 0;
  size_t size = 0;
  ASSERT_EQ(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, inside),
            CUDA_SUCCESS);
  ASSERT_EQ(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, inside), CUDA_SUCCESS);
  EXPECT_EQ(start, device);
  EXPECT_EQ(size, 1000u);
  void* host_address = nullptr;
  EXPECT_EQ(cuPointerGetAttribute(&host_address, CU_POINTER_ATTRIBUTE_HOST_POINTER, inside),
            CUDA_ERROR_INVALID_VALUE);
  unsigned managed = 7;
  ASSERT_EQ(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, inside), CUDA_SUCCESS);
  EXPECT_EQ(managed, 0u);

  // Buffer ids differ between allocations that are alive at once.
  CUdeviceptr other = 0;
  ASSERT_EQ(cuMemAlloc_v2(&other, 1000), CUDA_SUCCESS);
  unsigned long long first_id = 0, second_id = 0;
  ASSERT_EQ(cuPointerGetAttribute(&first_id, CU_POINTER_ATTRIBUTE_BUFFER_ID, device), CUDA_SUCCESS);
  ASSERT_EQ(cuPointerGetAttribute(&second_id, CU_POINTER_ATTRIBUTE_BUFFER_ID, other), CUDA_SUCCESS);
  EXPECT_NE(first_id, second_id);

  unsigned sync = 1;
  ASSERT_EQ(cuPointerSetAttribute(&sync, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, device), CUDA_SUCCESS);
  sync = 0;
  ASSERT_EQ(cuPointerGetAttribute(&sync, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, device), CUDA_SUCCESS);
  EXPECT_EQ(sync, 1u);
  EXPECT_EQ(cuPointerSetAttribute(&sync, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, device),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree_v2(other), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(device), CUDA_SUCCESS);
}

TEST_F(MemoryApi, UnknownPointerIsAnErrorForOneAttributeButNotForMany) {
  int stack_value = 0;
  auto address = reinterpret_cast<CUdeviceptr>(&stack_value);
  unsigned type = 5;
  EXPECT_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address),
            CUDA_ERROR_INVALID_VALUE);
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                      CU_POINTER_ATTRIBUTE_CONTEXT};
  CUcontext owner = context_;
  void* data[] = {&type, &owner};
  ASSERT_EQ(cuPointerGetAttributes(2, attributes, data, address), CUDA_SUCCESS);
  EXPECT_EQ(type, 0u);
  EXPECT_EQ(owner, nullptr);
}

// --- Managed memory ---

TEST_F(MemoryApi, ManagedMemoryRemembersAdviceAndPrefetches) {
  CUdeviceptr managed = 0;
  ASSERT_EQ(cuMemAllocManaged(&managed, 8192, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  unsigned is_managed = 0;
  ASSERT_EQ(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, managed),
            CUDA_SUCCESS);
  EXPECT_EQ(is_managed, 1u);

  int value = -5;
  ASSERT_EQ(cuMemRangeGetAttribute(&value, sizeof value, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
                                   managed, 8192),
            CUDA_SUCCESS);
  EXPECT_EQ(value, CU_DEVICE_INVALID);
  ASSERT_EQ(cuMemAdvise(managed, 8192, CU_MEM_ADVISE_SET_READ_MOSTLY, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAdvise(managed, 8192, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_CPU),
            CUDA_SUCCESS);
  ASSERT_EQ(cuMemAdvise(managed, 8192, CU_MEM_ADVISE_SET_ACCESSED_BY, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemPrefetchAsync(managed, 4096, 0, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);

  int read_mostly = 0, preferred = 0, last_prefetch = -5;
  int accessed_by[3] = {7, 7, 7};
  void* data[] = {&read_mostly, &preferred, &last_prefetch, accessed_by};
  size_t sizes[] = {4, 4, 4, sizeof accessed_by};
  CUmem_range_attribute attributes[] = {
      CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
      CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY};
  ASSERT_EQ(cuMemRangeGetAttributes(data, sizes, attributes, 4, managed, 4096), CUDA_SUCCESS);
  EXPECT_EQ(read_mostly, 1);
  EXPECT_EQ(preferred, CU_DEVICE_CPU);
  EXPECT_EQ(last_prefetch, 0);
  EXPECT_EQ(accessed_by[0], 0);
  EXPECT_EQ(accessed_by[1], CU_DEVICE_INVALID);
  EXPECT_EQ(accessed_by[2], CU_DEVICE_INVALID);

  CUmemLocation host_location{CU_MEM_LOCATION_TYPE_HOST, 0};
  ASSERT_EQ(cuMemPrefetchAsync_v2(managed, 8192, host_location, 0, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  int location_type = 0;
  ASSERT_EQ(
      cuMemRangeGetAttribute(&location_type, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                             managed, 8192),
      CUDA_SUCCESS);
  EXPECT_EQ(location_type, CU_MEM_LOCATION_TYPE_HOST);

  EXPECT_EQ(cuMemPrefetchAsync(managed, 4096, 42, nullptr), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(cuMemPrefetchAsync(managed, 9000, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemRangeGetAttribute(&value, 2, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed, 8192),
            CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr plain = 0;
  ASSERT_EQ(cuMemAlloc_v2(&plain, 64), CUDA_SUCCESS);
  EXPECT_EQ(cuMemAdvise(plain, 64, CU_MEM_ADVISE_SET_READ_MOSTLY, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree_v2(plain), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(managed), CUDA_SUCCESS);
}

TEST_F(MemoryApi, PrefetchBatchesRecordEachRangesLocation) {
  CUdeviceptr first = 0, second = 0;
  ASSERT_EQ(cuMemAllocManaged(&first, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAllocManaged(&second, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr ranges[] = {first, second};
  size_t sizes[] = {4096, 1024};
  // The first location applies from range 0, the second from range 1.
  CUmemLocation locations[] = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, {CU_MEM_LOCATION_TYPE_HOST, 0}};
  size_t starts[] = {0, 1};
  ASSERT_EQ(cuMemPrefetchBatchAsync(ranges, sizes, 2, locations, starts, 2, 0, stream),
            CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  int last = -5;
  ASSERT_EQ(cuMemRangeGetAttribute(&last, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, first,
                                   4096),
            CUDA_SUCCESS);
  EXPECT_EQ(last, 0);
  ASSERT_EQ(cuMemRangeGetAttribute(&last, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION,
                                   second, 1024),
            CUDA_SUCCESS);
  EXPECT_EQ(last, CU_DEVICE_CPU);

  EXPECT_EQ(cuMemPrefetchBatchAsync(ranges, sizes, 2, locations, starts, 2, 1, stream),
            CUDA_ERROR_INVALID_VALUE) << "flags must be 0";
  EXPECT_EQ(cuMemPrefetchBatchAsync(ranges, sizes, 0, locations, starts, 1, 0, stream),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemPrefetchBatchAsync(nullptr, sizes, 2, locations, starts, 2, 0, stream),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemPrefetchBatchAsync(ranges, sizes, 2, locations, starts, 3, 0, stream),
            CUDA_ERROR_INVALID_VALUE) << "more locations than ranges";
  size_t unordered[] = {1, 0};
  EXPECT_EQ(cuMemPrefetchBatchAsync(ranges, sizes, 2, locations, unordered, 2, 0, stream),
            CUDA_ERROR_INVALID_VALUE);
  CUmemLocation missing[] = {{CU_MEM_LOCATION_TYPE_DEVICE, 99}};
  EXPECT_EQ(cuMemPrefetchBatchAsync(ranges, sizes, 2, missing, starts, 1, 0, stream),
            CUDA_ERROR_INVALID_DEVICE);
  CUdeviceptr plain = 0;
  ASSERT_EQ(cuMemAlloc_v2(&plain, 64), CUDA_SUCCESS);
  CUdeviceptr not_managed[] = {first, plain};
  size_t small[] = {64, 64};
  EXPECT_EQ(cuMemPrefetchBatchAsync(not_managed, small, 2, locations, starts, 2, 0, stream),
            CUDA_ERROR_INVALID_VALUE);

  // Attaching: the whole allocation (length 0 or its size), one of the three flags.
  EXPECT_EQ(cuStreamAttachMemAsync(stream, first, 0, CU_MEM_ATTACH_SINGLE), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamAttachMemAsync(stream, first, 4096, CU_MEM_ATTACH_HOST), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamAttachMemAsync(nullptr, second, 0, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamAttachMemAsync(nullptr, second, 0, CU_MEM_ATTACH_SINGLE),
            CUDA_ERROR_INVALID_VALUE) << "no single attachment to the legacy stream";
  EXPECT_EQ(cuStreamAttachMemAsync(stream, first, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamAttachMemAsync(stream, first, 0, CU_MEM_ATTACH_GLOBAL | CU_MEM_ATTACH_HOST),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamAttachMemAsync(stream, first, 100, CU_MEM_ATTACH_GLOBAL),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamAttachMemAsync(stream, first + 64, 0, CU_MEM_ATTACH_GLOBAL),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamAttachMemAsync(stream, plain, 0, CU_MEM_ATTACH_GLOBAL),
            CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(plain), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(stream), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(first), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(second), CUDA_SUCCESS);
}

// --- Batched copies ---

TEST_F(MemoryApi, CopyBatchMovesEveryBufferInStreamOrder) {
  CUstream stream = nullptr;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr device = 0;
  ASSERT_EQ(cuMemAlloc_v2(&device, 3 * 256), CUDA_SUCCESS);
  auto source = pattern(3 * 256);
  std::vector<unsigned char> back(3 * 256, 0);
  auto at = [](void* pointer, size_t offset) {
    return reinterpret_cast<CUdeviceptr>(static_cast<unsigned char*>(pointer) + offset);
  };
  // Host to device in three pieces (the first two with one set of attributes, the last with
  // another), then device to host in one.
  CUdeviceptr destinations[] = {device, device + 256, device + 512};
  CUdeviceptr sources[] = {at(source.data(), 0), at(source.data(), 256), at(source.data(), 512)};
  size_t sizes[] = {256, 256, 256};
  CUmemcpyAttributes attributes[2] = {};
  attributes[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  attributes[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
  attributes[1].flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;
  size_t starts[] = {0, 2};
  ASSERT_EQ(cuMemcpyBatchAsync_v2(destinations, sources, sizes, 3, attributes, starts, 2, stream),
            CUDA_SUCCESS);
  CUdeviceptr back_destination[] = {at(back.data(), 0)};
  CUdeviceptr back_source[] = {device};
  size_t whole[] = {3 * 256};
  size_t failed = 7;
  ASSERT_EQ(cuMemcpyBatchAsync(back_destination, back_source, whole, 1, attributes, starts, 1,
                               &failed, stream),
            CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(back, source);

  // Errors: the whole batch (failure index SIZE_MAX) or one copy (its index).
  EXPECT_EQ(cuMemcpyBatchAsync(destinations, sources, sizes, 3, attributes, starts, 2, &failed,
                               nullptr),
            CUDA_ERROR_INVALID_VALUE) << "the legacy default stream is refused";
  EXPECT_EQ(failed, SIZE_MAX);
  EXPECT_EQ(cuMemcpyBatchAsync_v2(destinations, sources, sizes, 0, attributes, starts, 1, stream),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyBatchAsync_v2(destinations, sources, sizes, 3, attributes, starts, 0, stream),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyBatchAsync_v2(destinations, sources, sizes, 3, nullptr, starts, 2, stream),
            CUDA_ERROR_INVALID_VALUE);
  size_t late_start[] = {1, 2};
  EXPECT_EQ(cuMemcpyBatchAsync_v2(destinations, sources, sizes, 3, attributes, late_start, 2,
                                  stream),
            CUDA_ERROR_INVALID_VALUE) << "the first attributes must start at copy 0";
  size_t past_end[] = {0, 3};
  EXPECT_EQ(cuMemcpyBatchAsync_v2(destinations, sources, sizes, 3, attributes, past_end, 2,
                                  stream),
            CUDA_ERROR_INVALID_VALUE);
  CUmemcpyAttributes unordered[2] = {attributes[0], attributes[1]};
  unordered[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID;
  EXPECT_EQ(cuMemcpyBatchAsync(destinations, sources, sizes, 3, unordered, starts, 2, &failed,
                               stream),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(failed, 2u);
  CUdeviceptr with_null[] = {device, 0, device + 512};
  EXPECT_EQ(cuMemcpyBatchAsync(with_null, sources, sizes, 3, attributes, starts, 2, &failed,
                               stream),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(failed, 1u);
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(device), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(stream), CUDA_SUCCESS);
}

// --- The stream-ordered allocator and memory pools ---

TEST_F(MemoryApi, AllocAsyncMemoryIsUsableInStreamOrderAndFreedAfterIt) {
  CUstream stream = nullptr;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr device = 0;
  ASSERT_EQ(cuMemAllocAsync(&device, 4096, stream), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32Async(device, 0x01020304u, 1024, stream), CUDA_SUCCESS);
  std::vector<uint32_t> back(1024);
  ASSERT_EQ(cuMemcpyDtoHAsync_v2(back.data(), device, 4096, stream), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFreeAsync(device, stream), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  for (uint32_t word : back) ASSERT_EQ(word, 0x01020304u);
  // Freed: a second free and a query are errors now.
  EXPECT_EQ(cuMemFreeAsync(device, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemAllocAsync(nullptr, 16, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemAllocAsync(&device, 0, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamDestroy_v2(stream), CUDA_SUCCESS);
}

TEST_F(MemoryApi, PoolAttributesTrackUseAndTrimming) {
  CUmemPoolProps properties{};
  properties.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  properties.location = CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemoryPool pool = nullptr;
  ASSERT_EQ(cuMemPoolCreate(&pool, &properties), CUDA_SUCCESS);
  cuuint64_t threshold = 1 << 20;
  ASSERT_EQ(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
            CUDA_SUCCESS);

  CUdeviceptr first = 0;
  ASSERT_EQ(cuMemAllocFromPoolAsync(&first, 100000, pool, nullptr), CUDA_SUCCESS);
  cuuint64_t used = 0, reserved = 0;
  ASSERT_EQ(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used), CUDA_SUCCESS);
  EXPECT_GE(used, 100000u);
  CUmemoryPool owner = nullptr;
  ASSERT_EQ(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, first),
            CUDA_SUCCESS);
  EXPECT_EQ(owner, pool);

  ASSERT_EQ(cuMemFreeAsync(first, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  ASSERT_EQ(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used), CUDA_SUCCESS);
  ASSERT_EQ(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved),
            CUDA_SUCCESS);
  EXPECT_EQ(used, 0u);
  EXPECT_GE(reserved, 100000u);  // kept: below the release threshold

  // The freed block is reused for a request of the same size.
  CUdeviceptr second = 0;
  ASSERT_EQ(cuMemAllocFromPoolAsync(&second, 100000, pool, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(second, first);
  ASSERT_EQ(cuMemFreeAsync(second, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  ASSERT_EQ(cuMemPoolTrimTo(pool, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved),
            CUDA_SUCCESS);
  EXPECT_EQ(reserved, 0u);

  cuuint64_t high = 0;
  ASSERT_EQ(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &high), CUDA_SUCCESS);
  EXPECT_GE(high, 100000u);
  cuuint64_t reset = 0;
  ASSERT_EQ(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &reset), CUDA_SUCCESS);
  ASSERT_EQ(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &high), CUDA_SUCCESS);
  EXPECT_EQ(high, 0u);
  reset = 5;
  EXPECT_EQ(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &reset),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &reset),
            CUDA_ERROR_INVALID_VALUE);

  // The device's current pool: set, read back, and back to the default on destruction.
  CUmemoryPool default_pool = nullptr, current = nullptr;
  ASSERT_EQ(cuDeviceGetDefaultMemPool(&default_pool, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuDeviceSetMemPool(0, pool), CUDA_SUCCESS);
  ASSERT_EQ(cuDeviceGetMemPool(&current, 0), CUDA_SUCCESS);
  EXPECT_EQ(current, pool);
  ASSERT_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  ASSERT_EQ(cuDeviceGetMemPool(&current, 0), CUDA_SUCCESS);
  EXPECT_EQ(current, default_pool);
  EXPECT_EQ(cuMemPoolDestroy(pool), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemPoolDestroy(default_pool), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetDefaultMemPool(&current, 99), CUDA_ERROR_INVALID_DEVICE);
}

TEST_F(MemoryApi, PoolsByLocationAreTheDevicesPools) {
  CUmemLocation device0{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemoryPool by_location = nullptr, by_device = nullptr;
  ASSERT_EQ(cuMemGetDefaultMemPool(&by_location, &device0, CU_MEM_ALLOCATION_TYPE_PINNED),
            CUDA_SUCCESS);
  ASSERT_EQ(cuDeviceGetDefaultMemPool(&by_device, 0), CUDA_SUCCESS);
  EXPECT_EQ(by_location, by_device);

  CUmemPoolProps properties{};
  properties.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  properties.location = device0;
  CUmemoryPool pool = nullptr;
  ASSERT_EQ(cuMemPoolCreate(&pool, &properties), CUDA_SUCCESS);
  ASSERT_EQ(cuMemSetMemPool(&device0, CU_MEM_ALLOCATION_TYPE_PINNED, pool), CUDA_SUCCESS);
  CUmemoryPool current = nullptr;
  ASSERT_EQ(cuMemGetMemPool(&current, &device0, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_SUCCESS);
  EXPECT_EQ(current, pool);
  ASSERT_EQ(cuDeviceGetMemPool(&current, 0), CUDA_SUCCESS);
  EXPECT_EQ(current, pool);
  ASSERT_EQ(cuMemSetMemPool(&device0, CU_MEM_ALLOCATION_TYPE_PINNED, by_device), CUDA_SUCCESS);

  // The pool's own device has read-write access and keeps it; others get what they are given.
  CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  ASSERT_EQ(cuMemPoolGetAccess(&flags, pool, &device0), CUDA_SUCCESS);
  EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CUmemAccessDesc own{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_NONE};
  EXPECT_EQ(cuMemPoolSetAccess(pool, &own, 1), CUDA_ERROR_INVALID_VALUE);
  own.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  EXPECT_EQ(cuMemPoolSetAccess(pool, &own, 1), CUDA_SUCCESS);
  int devices = 0;
  ASSERT_EQ(cuDeviceGetCount(&devices), CUDA_SUCCESS);
  if (devices > 1) {
    int peer = 0;
    ASSERT_EQ(cuDeviceCanAccessPeer(&peer, 1, 0), CUDA_SUCCESS);
    CUmemLocation device1{CU_MEM_LOCATION_TYPE_DEVICE, 1};
    ASSERT_EQ(cuMemPoolGetAccess(&flags, pool, &device1), CUDA_SUCCESS);
    EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    CUmemAccessDesc other{device1, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    EXPECT_EQ(cuMemPoolSetAccess(pool, &other, 1), peer ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
    ASSERT_EQ(cuMemPoolGetAccess(&flags, pool, &device1), CUDA_SUCCESS);
    EXPECT_EQ(flags, peer ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE);
  }
  CUmemAccessDesc bad_flags{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CUmemAccess_flags(2)};
  EXPECT_EQ(cuMemPoolSetAccess(pool, &bad_flags, 1), CUDA_ERROR_INVALID_VALUE);
  CUmemAccessDesc no_device{{CU_MEM_LOCATION_TYPE_DEVICE, 99}, CU_MEM_ACCESS_FLAGS_PROT_READ};
  EXPECT_EQ(cuMemPoolSetAccess(pool, &no_device, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemPoolSetAccess(pool, nullptr, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemPoolGetAccess(nullptr, pool, &device0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemPoolGetAccess(&flags, pool, nullptr), CUDA_ERROR_INVALID_VALUE);

  // Locations without pools here, and arguments NVIDIA refuses.
  CUmemLocation host{CU_MEM_LOCATION_TYPE_HOST, 0};
  EXPECT_EQ(cuMemGetDefaultMemPool(&current, &host, CU_MEM_ALLOCATION_TYPE_PINNED),
            CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(cuMemGetDefaultMemPool(&current, &device0, CU_MEM_ALLOCATION_TYPE_MANAGED),
            CUDA_ERROR_NOT_SUPPORTED);
  CUmemLocation none{CU_MEM_LOCATION_TYPE_NONE, 0};
  EXPECT_EQ(cuMemGetMemPool(&current, &none, CU_MEM_ALLOCATION_TYPE_PINNED),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemGetMemPool(&current, &device0, CU_MEM_ALLOCATION_TYPE_INVALID),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemGetMemPool(nullptr, &device0, CU_MEM_ALLOCATION_TYPE_PINNED),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemGetMemPool(&current, nullptr, CU_MEM_ALLOCATION_TYPE_PINNED),
            CUDA_ERROR_INVALID_VALUE);
  CUmemLocation missing{CU_MEM_LOCATION_TYPE_DEVICE, 99};
  EXPECT_EQ(cuMemGetDefaultMemPool(&current, &missing, CU_MEM_ALLOCATION_TYPE_PINNED),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  EXPECT_EQ(cuMemSetMemPool(&device0, CU_MEM_ALLOCATION_TYPE_PINNED, pool),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemPoolGetAccess(&flags, pool, &device0), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(MemoryApi, PoolWithMaximumSizeRefusesToGrowPastIt) {
  CUmemPoolProps properties{};
  properties.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  properties.location = CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  properties.maxSize = 1 << 20;
  CUmemoryPool pool = nullptr;
  ASSERT_EQ(cuMemPoolCreate(&pool, &properties), CUDA_SUCCESS);
  CUdeviceptr first = 0, second = 0;
  ASSERT_EQ(cuMemAllocFromPoolAsync(&first, 600 << 10, pool, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuMemAllocFromPoolAsync(&second, 600 << 10, pool, nullptr), CUDA_ERROR_OUT_OF_MEMORY);
  ASSERT_EQ(cuMemFreeAsync(first, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAllocFromPoolAsync(&second, 600 << 10, pool, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFree_v2(second), CUDA_SUCCESS);  // a synchronous free of pool memory is allowed
  EXPECT_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);

  properties.allocType = CU_MEM_ALLOCATION_TYPE_INVALID;
  EXPECT_EQ(cuMemPoolCreate(&pool, &properties), CUDA_ERROR_INVALID_VALUE);
  properties.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  properties.location.id = 99;
  EXPECT_EQ(cuMemPoolCreate(&pool, &properties), CUDA_ERROR_INVALID_DEVICE);
}

TEST_F(MemoryApi, FreedDeviceMemoryIsReusedForTheSameSizeClass) {
  CUdeviceptr first = 0, second = 0;
  ASSERT_EQ(cuMemAlloc_v2(&first, 3000), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFree_v2(first), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc_v2(&second, 2900), CUDA_SUCCESS);  // same 3072-byte class
  EXPECT_EQ(second, first);
  // Only the requested bytes are the allocation's, whatever the block's size.
  size_t size = 0;
  ASSERT_EQ(cuMemGetAddressRange_v2(nullptr, &size, second), CUDA_SUCCESS);
  EXPECT_EQ(size, 2900u);
  EXPECT_EQ(cuMemsetD8_v2(second, 0, 3000), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree_v2(second), CUDA_SUCCESS);
}

}  // namespace
