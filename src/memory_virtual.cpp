// Virtual memory management: physical allocations (cuMemCreate), address reservations, mapping
// one into the other, access rights, and POSIX file descriptors for sharing. The arguments are
// checked here with the codes NVIDIA's driver answers (tests/cuda/virtual_memory.cu records
// them); runtime/virtual_memory.h does the rest. Only the host backend implements it: on HIP
// every entry point answers CUDA_ERROR_NOT_SUPPORTED, as the device attribute says.
#include <vector>

#include "src/memory.h"

#include "runtime/backend.h"
#include "runtime/virtual_memory.h"

using namespace xcuda;
using runtime::VirtualMemory;

namespace {

bool valid_device(int device) { return device >= 0 && device < runtime::backend().device_count(); }

bool is_power_of_two(size_t value) { return value && (value & (value - 1)) == 0; }

bool granular(size_t value) { return value % VirtualMemory::granularity == 0; }

// What every entry point checks first: cuInit, and a backend that implements any of it.
CUresult check_available(const char* function) {
  XCUDA_MEMORY_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED,
                       "cuInit has not been called");
  XCUDA_MEMORY_REQUIRE(runtime::backend().name() == "host", CUDA_ERROR_NOT_SUPPORTED,
                       "virtual memory management needs the host backend");
  return CUDA_SUCCESS;
}

// A device location; `absent_device` is what NVIDIA's driver answers for a device that does not
// exist, which differs between entry points.
CUresult check_location(const char* function, const CUmemLocation& location,
                        CUresult absent_device = CUDA_ERROR_INVALID_DEVICE) {
  bool host = location.type == CU_MEM_LOCATION_TYPE_HOST ||
              location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
              location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
  XCUDA_MEMORY_REQUIRE(!host, CUDA_ERROR_NOT_SUPPORTED, "host locations are not supported");
  XCUDA_MEMORY_REQUIRE(location.type == CU_MEM_LOCATION_TYPE_DEVICE, CUDA_ERROR_INVALID_VALUE,
                       "unknown location type");
  XCUDA_MEMORY_REQUIRE(valid_device(location.id), absent_device, "the location names no device");
  return CUDA_SUCCESS;
}

CUresult check_type(const char* function, const CUmemAllocationProp& properties) {
  if (CUresult status = check_available(function); status != CUDA_SUCCESS) return status;
  XCUDA_MEMORY_REQUIRE(properties.type == CU_MEM_ALLOCATION_TYPE_PINNED, CUDA_ERROR_INVALID_VALUE,
                       "only CU_MEM_ALLOCATION_TYPE_PINNED memory can be created");
  return CUDA_SUCCESS;
}

}  // namespace

XCUDA_EXPORT CUresult cuMemGetAllocationGranularity(size_t* granularity,
                                                    const CUmemAllocationProp* prop,
                                                    CUmemAllocationGranularity_flags option) {
  const char* function = __func__;
  XCUDA_REQUIRE(granularity && prop, CUDA_ERROR_INVALID_VALUE, "null pointer");
  XCUDA_REQUIRE(option == CU_MEM_ALLOC_GRANULARITY_MINIMUM ||
                    option == CU_MEM_ALLOC_GRANULARITY_RECOMMENDED,
                CUDA_ERROR_INVALID_VALUE, "unknown granularity option");
  // NVIDIA's driver answers for any location, even one naming no device.
  if (CUresult status = check_type(function, *prop); status != CUDA_SUCCESS) return status;
  *granularity = VirtualMemory::granularity;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                                  const CUmemAllocationProp* prop, unsigned long long flags) {
  XCUDA_REQUIRE(handle && prop, CUDA_ERROR_INVALID_VALUE, "null pointer");
  XCUDA_REQUIRE(flags == 0, CUDA_ERROR_INVALID_VALUE, "flags must be 0");
  if (CUresult status = check_type(__func__, *prop); status != CUDA_SUCCESS) return status;
  if (CUresult status = check_location(__func__, prop->location); status != CUDA_SUCCESS)
    return status;
  XCUDA_REQUIRE((prop->requestedHandleTypes & ~CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0,
                CUDA_ERROR_INVALID_VALUE, "only POSIX file descriptor handles are supported");
  XCUDA_REQUIRE(size && granular(size), CUDA_ERROR_INVALID_VALUE,
                "size must be a non-zero multiple of the granularity");
  auto created =
      runtime::virtual_memory().create(prop->location.id, size, prop->requestedHandleTypes);
  XCUDA_CHECK_STATUS(created);
  *handle = *created;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  if (CUresult status = check_available(__func__); status != CUDA_SUCCESS) return status;
  XCUDA_CHECK_STATUS(runtime::virtual_memory().release(handle));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                             CUmemGenericAllocationHandle handle) {
  XCUDA_REQUIRE(prop, CUDA_ERROR_INVALID_VALUE, "null pointer");
  if (CUresult status = check_available(__func__); status != CUDA_SUCCESS) return status;
  auto described = runtime::virtual_memory().describe(handle);
  XCUDA_CHECK_STATUS(described);
  *prop = {};
  prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop->location = {CU_MEM_LOCATION_TYPE_DEVICE, described->device};
  prop->requestedHandleTypes = static_cast<CUmemAllocationHandleType>(described->handle_types);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle,
                                                  void* addr) {
  XCUDA_REQUIRE(handle, CUDA_ERROR_INVALID_VALUE, "null pointer");
  if (CUresult status = check_available(__func__); status != CUDA_SUCCESS) return status;
  auto retained = runtime::virtual_memory().retain(reinterpret_cast<uintptr_t>(addr));
  XCUDA_CHECK_STATUS(retained);
  *handle = *retained;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemExportToShareableHandle(void* shareableHandle,
                                                   CUmemGenericAllocationHandle handle,
                                                   CUmemAllocationHandleType handleType,
                                                   unsigned long long flags) {
  XCUDA_REQUIRE(shareableHandle, CUDA_ERROR_INVALID_VALUE, "null pointer");
  XCUDA_REQUIRE(flags == 0, CUDA_ERROR_INVALID_VALUE, "flags must be 0");
  if (CUresult status = check_available(__func__); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE(handleType == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, CUDA_ERROR_INVALID_VALUE,
                "only POSIX file descriptor handles are supported");
  auto descriptor = runtime::virtual_memory().export_descriptor(handle);
  XCUDA_CHECK_STATUS(descriptor);
  *static_cast<int*>(shareableHandle) = *descriptor;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle,
                                                     void* osHandle,
                                                     CUmemAllocationHandleType shHandleType) {
  XCUDA_REQUIRE(handle, CUDA_ERROR_INVALID_VALUE, "null pointer");
  if (CUresult status = check_available(__func__); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE(shHandleType == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                CUDA_ERROR_INVALID_VALUE, "only POSIX file descriptor handles are supported");
  // The descriptor travels in the pointer's bits, as the driver documents.
  auto imported = runtime::virtual_memory().import_descriptor(
      static_cast<int>(reinterpret_cast<uintptr_t>(osHandle)));
  XCUDA_CHECK_STATUS(imported);
  *handle = *imported;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment,
                                          CUdeviceptr addr, unsigned long long flags) {
  XCUDA_REQUIRE(ptr, CUDA_ERROR_INVALID_VALUE, "null pointer");
  XCUDA_REQUIRE(flags == 0, CUDA_ERROR_INVALID_VALUE, "flags must be 0");
  if (CUresult status = check_available(__func__); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE(size && granular(size), CUDA_ERROR_INVALID_VALUE,
                "size must be a non-zero multiple of the granularity");
  XCUDA_REQUIRE(alignment == 0 || is_power_of_two(alignment), CUDA_ERROR_INVALID_VALUE,
                "alignment must be 0 or a power of two");
  auto reserved = runtime::virtual_memory().reserve(size, alignment, addr);
  XCUDA_CHECK_STATUS(reserved);
  *ptr = *reserved;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  if (CUresult status = check_available(__func__); status != CUDA_SUCCESS) return status;
  XCUDA_CHECK_STATUS(runtime::virtual_memory().free_reservation(ptr, size));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                               CUmemGenericAllocationHandle handle, unsigned long long flags) {
  XCUDA_REQUIRE(flags == 0, CUDA_ERROR_INVALID_VALUE, "flags must be 0");
  if (CUresult status = check_available(__func__); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE(size && granular(size), CUDA_ERROR_INVALID_VALUE,
                "the size must be a multiple of the granularity");
  // NVIDIA's driver 580 (an H100) answers these, and a size past the allocation, as not supported.
  XCUDA_REQUIRE(granular(ptr), CUDA_ERROR_NOT_SUPPORTED, "the address must be a multiple of the granularity");
  XCUDA_REQUIRE(offset == 0, CUDA_ERROR_NOT_SUPPORTED,
                "mapping from an offset into the allocation is not supported");
  XCUDA_CHECK_STATUS(runtime::virtual_memory().map(ptr, size, offset, handle));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  if (CUresult status = check_available(__func__); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE(size && granular(size) && granular(ptr), CUDA_ERROR_INVALID_VALUE,
                "address and size must be multiples of the granularity");
  // Work still queued may use the memory; a GPU driver waits for it too.
  if (runtime::Context* context = runtime::current_context()) (void)context->synchronize();
  XCUDA_CHECK_STATUS(runtime::virtual_memory().unmap(ptr, size));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc,
                                     size_t count) {
  const char* function = __func__;
  XCUDA_REQUIRE(desc && count, CUDA_ERROR_INVALID_VALUE, "no access descriptors");
  if (CUresult status = check_available(function); status != CUDA_SUCCESS) return status;
  std::vector<runtime::AccessGrant> grants;
  for (size_t i = 0; i < count; ++i) {
    if (CUresult status = check_location(function, desc[i].location, CUDA_ERROR_INVALID_VALUE);
        status != CUDA_SUCCESS)
      return status;
    XCUDA_REQUIRE(desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_NONE ||
                      desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READ ||
                      desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                  CUDA_ERROR_INVALID_VALUE, "unknown access flags");
    grants.push_back({desc[i].location.id, static_cast<unsigned>(desc[i].flags)});
  }
  // Accessible memory is registered under a context, for pointer queries: the current one, or
  // else the primary context of the first device granted access.
  runtime::Context* context = runtime::current_context();
  if (!context) context = runtime::primary_context_if_active(grants.front().device);
  XCUDA_REQUIRE(context, CUDA_ERROR_INVALID_CONTEXT, "no context to register the memory under");
  XCUDA_CHECK_STATUS(runtime::virtual_memory().set_access(ptr, size, grants, context));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location,
                                     CUdeviceptr ptr) {
  const char* function = __func__;
  XCUDA_REQUIRE(flags && location, CUDA_ERROR_INVALID_VALUE, "null pointer");
  if (CUresult status = check_available(function); status != CUDA_SUCCESS) return status;
  if (CUresult status = check_location(function, *location); status != CUDA_SUCCESS) return status;
  auto granted = runtime::virtual_memory().access(ptr, location->id);
  XCUDA_CHECK_STATUS(granted);
  *flags = *granted;
  return CUDA_SUCCESS;
}
