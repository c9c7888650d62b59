// Virtual memory management through the Driver API, as a CUDA program uses it: physical
// allocations (cuMemCreate) mapped into reserved address ranges, the same physical memory seen at
// two addresses, access rights, handles retained from an address, and a POSIX file descriptor
// exported and imported again. Expected error codes are what NVIDIA's driver 580 (CUDA 13)
// answered on an H200 and on an H100. Null pointers and made-up handles are left out: that
// driver dereferences them and crashes (tests/unit/api_virtual_memory_test.cpp checks xcuda's
// answers).
#include "check.h"

#include <cuda.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

__global__ void add_index(unsigned* values, unsigned count, unsigned base) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) values[i] += base + i;
}

static CUmemAllocationProp pinned_on(int device, CUmemAllocationHandleType handle_types) {
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = handle_types;
  return prop;
}

static CUmemAccessDesc read_write_on(int device) {
  CUmemAccessDesc access = {};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return access;
}

static void check_attributes(CUdevice device) {
  int value = -1;
  EXPECT_OK(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                                 device));
  EXPECT_TRUE(value == 1, "virtual memory management supported: %d", value);
  EXPECT_OK(cuDeviceGetAttribute(
      &value, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, device));
  EXPECT_TRUE(value == 1, "POSIX file descriptor handles supported: %d", value);
}

static size_t check_granularity(int device_count) {
  CUmemAllocationProp prop = pinned_on(0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  size_t minimum = 0, recommended = 0;
  EXPECT_OK(cuMemGetAllocationGranularity(&minimum, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  EXPECT_OK(
      cuMemGetAllocationGranularity(&recommended, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  EXPECT_TRUE(minimum > 0 && (minimum & (minimum - 1)) == 0, "minimum granularity %zu", minimum);
  EXPECT_TRUE(minimum && recommended >= minimum && recommended % minimum == 0,
              "recommended granularity %zu, minimum %zu", recommended, minimum);
  size_t ignored = 0;
  EXPECT_CODE(cuMemGetAllocationGranularity(nullptr, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
              CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemGetAllocationGranularity(&ignored, nullptr, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
              CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemGetAllocationGranularity(&ignored, &prop,
                                            static_cast<CUmemAllocationGranularity_flags>(7)),
              CUDA_ERROR_INVALID_VALUE);
  // The location is not checked here, not even for a device that does not exist.
  CUmemAllocationProp absent = pinned_on(device_count, CU_MEM_HANDLE_TYPE_NONE);
  EXPECT_OK(cuMemGetAllocationGranularity(&ignored, &absent, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  return minimum;
}

static void check_create_errors(size_t granularity, int device_count) {
  CUmemAllocationProp prop = pinned_on(0, CU_MEM_HANDLE_TYPE_NONE);
  CUmemGenericAllocationHandle handle = 0;
  EXPECT_CODE(cuMemCreate(&handle, 0, &prop, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemCreate(&handle, granularity / 2, &prop, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemCreate(&handle, granularity, &prop, 1), CUDA_ERROR_INVALID_VALUE);
  CUmemAllocationProp untyped = prop;
  untyped.type = CU_MEM_ALLOCATION_TYPE_INVALID;
  EXPECT_CODE(cuMemCreate(&handle, granularity, &untyped, 0), CUDA_ERROR_INVALID_VALUE);
  CUmemAllocationProp absent = pinned_on(device_count, CU_MEM_HANDLE_TYPE_NONE);
  EXPECT_CODE(cuMemCreate(&handle, granularity, &absent, 0), CUDA_ERROR_INVALID_DEVICE);
  CUmemAllocationProp foreign = pinned_on(0, CU_MEM_HANDLE_TYPE_WIN32);
  EXPECT_CODE(cuMemCreate(&handle, granularity, &foreign, 0), CUDA_ERROR_INVALID_VALUE);
}

static void check_reserve_errors(size_t granularity) {
  CUdeviceptr address = 0;
  EXPECT_CODE(cuMemAddressReserve(&address, 0, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemAddressReserve(&address, granularity / 2, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemAddressReserve(&address, granularity, 3, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemAddressReserve(&address, granularity, 0, 0, 1), CUDA_ERROR_INVALID_VALUE);
  // A larger alignment than the granularity is honoured.
  EXPECT_OK(cuMemAddressReserve(&address, granularity, granularity * 4, 0, 0));
  EXPECT_TRUE(address % (granularity * 4) == 0, "address %#llx not aligned",
              static_cast<unsigned long long>(address));
  EXPECT_CODE(cuMemAddressFree(address, granularity * 2), CUDA_ERROR_INVALID_VALUE);
  EXPECT_OK(cuMemAddressFree(address, granularity));
}

// One physical allocation mapped twice, side by side in one reservation: what a kernel adds
// through one address is there through the other.
static void check_aliased_mappings(size_t granularity) {
  const size_t bytes = 2 * granularity;
  CUmemAllocationProp prop = pinned_on(0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  CUmemGenericAllocationHandle handle = 0;
  EXPECT_OK(cuMemCreate(&handle, bytes, &prop, 0));
  CUdeviceptr base = 0;
  EXPECT_OK(cuMemAddressReserve(&base, 2 * bytes, 0, 0, 0));
  CUdeviceptr first = base, second = base + bytes;

  EXPECT_CODE(cuMemMap(first, bytes, 0, handle, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemMap(first, 2 * bytes, 0, handle, 0), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_CODE(cuMemMap(first + 4096, granularity, 0, handle, 0), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_CODE(cuMemMap(first, granularity, granularity, handle, 0), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_OK(cuMemMap(first, bytes, 0, handle, 0));
  EXPECT_CODE(cuMemMap(first, bytes, 0, handle, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_OK(cuMemMap(second, bytes, 0, handle, 0));

  CUmemLocation location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  unsigned long long flags = 99;
  EXPECT_OK(cuMemGetAccess(&flags, &location, first));
  EXPECT_TRUE(flags == CU_MEM_ACCESS_FLAGS_PROT_NONE, "access before cuMemSetAccess: %llu", flags);
  CUmemAccessDesc access = read_write_on(0);
  EXPECT_CODE(cuMemSetAccess(first, 2 * bytes, &access, 0), CUDA_ERROR_INVALID_VALUE);
  // Access is set on whole mappings.
  EXPECT_CODE(cuMemSetAccess(first, granularity, &access, 1), CUDA_ERROR_INVALID_VALUE);
  CUmemAccessDesc absent = read_write_on(99);
  EXPECT_CODE(cuMemSetAccess(first, bytes, &absent, 1), CUDA_ERROR_INVALID_VALUE);
  CUmemLocation absent_location = {CU_MEM_LOCATION_TYPE_DEVICE, 99};
  EXPECT_CODE(cuMemGetAccess(&flags, &absent_location, first), CUDA_ERROR_INVALID_DEVICE);
  // One call may cover both mappings.
  EXPECT_OK(cuMemSetAccess(first, 2 * bytes, &access, 1));
  EXPECT_OK(cuMemGetAccess(&flags, &location, second + 12));
  EXPECT_TRUE(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE, "access after cuMemSetAccess: %llu",
              flags);

  const unsigned count = static_cast<unsigned>(bytes / sizeof(unsigned));
  EXPECT_OK(cuMemsetD32(first, 5, count));
  add_index<<<(count + 255) / 256, 256>>>(reinterpret_cast<unsigned*>(second), count, 1000);
  CHECK_LAUNCH();
  std::vector<unsigned> seen(count);
  EXPECT_OK(cuMemcpyDtoH(seen.data(), first, bytes));
  for (unsigned i = 0; i < count; ++i)
    if (seen[i] != 1005 + i) {
      EXPECT_TRUE(false, "first mapping, element %u: %u", i, seen[i]);
      break;
    }
  // A copy may run from one mapping into the next.
  unsigned across[8] = {};
  EXPECT_OK(cuMemcpyDtoH(across, second - 16, sizeof across));
  EXPECT_TRUE(across[0] == 1005 + count - 4 && across[4] == 1005, "across mappings: %u %u",
              across[0], across[4]);

  // Address queries describe one mapping.
  CUdeviceptr range_base = 0;
  size_t range_size = 0;
  EXPECT_OK(cuMemGetAddressRange(&range_base, &range_size, second + 100));
  EXPECT_TRUE(range_base == second && range_size == bytes, "range %#llx +%zu",
              static_cast<unsigned long long>(range_base), range_size);
  CUmemGenericAllocationHandle retained = 0;
  EXPECT_OK(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(second + 64)));
  EXPECT_TRUE(retained == handle, "retained handle differs");
  EXPECT_OK(cuMemRelease(retained));
  CUmemAllocationProp described = {};
  EXPECT_OK(cuMemGetAllocationPropertiesFromHandle(&described, handle));
  EXPECT_TRUE(described.type == CU_MEM_ALLOCATION_TYPE_PINNED &&
                  described.location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
                  described.location.id == 0 &&
                  described.requestedHandleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
              "properties: type %d location %d/%d handle types %d", described.type,
              described.location.type, described.location.id, described.requestedHandleTypes);
  EXPECT_CODE(cuMemFree(first), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemAddressFree(base, 2 * bytes), CUDA_ERROR_INVALID_VALUE);  // still mapped

  // Unmapping takes a whole mapping; the physical memory lives on while mapped, even once its
  // handle is released.
  EXPECT_CODE(cuMemUnmap(first, granularity), CUDA_ERROR_INVALID_VALUE);
  EXPECT_OK(cuMemUnmap(first, bytes));
  EXPECT_CODE(cuMemGetAccess(&flags, &location, first), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(first)),
              CUDA_ERROR_INVALID_VALUE);
  EXPECT_OK(cuMemRelease(handle));
  EXPECT_CODE(cuMemRelease(handle), CUDA_ERROR_INVALID_VALUE);
  // While mapped, the memory is still described by its released handle.
  EXPECT_OK(cuMemGetAllocationPropertiesFromHandle(&described, handle));
  unsigned last = 0;
  EXPECT_OK(cuMemcpyDtoH(&last, second + bytes - sizeof last, sizeof last));
  EXPECT_TRUE(last == 1005 + count - 1, "after release: %u", last);
  EXPECT_OK(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(second)));
  EXPECT_TRUE(retained == handle, "handle retained after release differs");
  EXPECT_OK(cuMemRelease(retained));
  EXPECT_OK(cuMemUnmap(second, bytes));
  EXPECT_OK(cuMemAddressFree(base, 2 * bytes));
}

// A file descriptor exported from one allocation imports as a handle to the same memory.
static void check_file_descriptor(size_t granularity) {
  CUmemAllocationProp prop = pinned_on(0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  CUmemGenericAllocationHandle exported = 0;
  EXPECT_OK(cuMemCreate(&exported, granularity, &prop, 0));
  int descriptor = -1;
  EXPECT_CODE(cuMemExportToShareableHandle(&descriptor, exported,
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 1),
              CUDA_ERROR_INVALID_VALUE);
  EXPECT_OK(cuMemExportToShareableHandle(&descriptor, exported,
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  EXPECT_TRUE(descriptor >= 0, "descriptor %d", descriptor);
  CUmemGenericAllocationHandle imported = 0;
  EXPECT_OK(cuMemImportFromShareableHandle(
      &imported, reinterpret_cast<void*>(static_cast<uintptr_t>(descriptor)),
      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(descriptor);

  CUdeviceptr base = 0;
  EXPECT_OK(cuMemAddressReserve(&base, 2 * granularity, 0, 0, 0));
  EXPECT_OK(cuMemMap(base, granularity, 0, exported, 0));
  EXPECT_OK(cuMemMap(base + granularity, granularity, 0, imported, 0));
  CUmemAccessDesc access = read_write_on(0);
  EXPECT_OK(cuMemSetAccess(base, 2 * granularity, &access, 1));
  const unsigned pattern = 0xC0FFEE;
  EXPECT_OK(cuMemsetD32(base + granularity, pattern, granularity / sizeof(unsigned)));
  unsigned seen = 0;
  EXPECT_OK(cuMemcpyDtoH(&seen, base + 256, sizeof seen));
  EXPECT_TRUE(seen == pattern, "through the exported handle: %#x", seen);
  CUmemAllocationProp described = {};
  EXPECT_OK(cuMemGetAllocationPropertiesFromHandle(&described, imported));
  EXPECT_TRUE(described.location.id == 0 && described.requestedHandleTypes == 0,
              "imported location %d, handle types %d", described.location.id,
              described.requestedHandleTypes);

  // Memory created without a shareable handle type cannot be exported.
  CUmemAllocationProp plain = pinned_on(0, CU_MEM_HANDLE_TYPE_NONE);
  CUmemGenericAllocationHandle private_handle = 0;
  EXPECT_OK(cuMemCreate(&private_handle, granularity, &plain, 0));
  EXPECT_CODE(cuMemExportToShareableHandle(&descriptor, private_handle,
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
              CUDA_ERROR_INVALID_VALUE);
  EXPECT_OK(cuMemRelease(private_handle));

  EXPECT_OK(cuMemUnmap(base, 2 * granularity));
  EXPECT_OK(cuMemRelease(exported));
  EXPECT_OK(cuMemRelease(imported));
  EXPECT_OK(cuMemAddressFree(base, 2 * granularity));
}

int main() {
  CHECK(cudaFree(nullptr));  // creates and binds the primary context
  int device_count = 0;
  CHECK(cudaGetDeviceCount(&device_count));
  CUdevice device = 0;
  EXPECT_OK(cuDeviceGet(&device, 0));
  check_attributes(device);
  size_t granularity = check_granularity(device_count);
  if (granularity == 0) return 1;
  check_create_errors(granularity, device_count);
  check_reserve_errors(granularity);
  check_aliased_mappings(granularity);
  check_file_descriptor(granularity);
  if (failures) {
    std::fprintf(stderr, "virtual_memory: %d failure(s)\n", failures);
    return 1;
  }
  std::printf("virtual_memory: granularity %zu, all checks passed\n", granularity);
  return 0;
}
