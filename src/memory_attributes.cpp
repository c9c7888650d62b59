// What CUDA knows about a pointer: page-locked registration of existing host memory
// (cuMemHostRegister), pointer attributes, and the hints of managed memory (cuMemAdvise,
// cuMemPrefetchAsync, cuMemRangeGetAttribute). On the host backend every kind of memory is the
// process's own, so hints change nothing but what the queries report back.
#include <cstring>

#include "src/memory.h"

#include "runtime/backend.h"
#include "runtime/memory_pool.h"

using namespace xcuda;
using runtime::Allocation;
using runtime::MemoryKind;

namespace {

constexpr int cpu_location = CU_DEVICE_CPU;
constexpr int no_location = CU_DEVICE_INVALID;

template <class Value>
void store(void* data, Value value) {
  std::memcpy(data, &value, sizeof value);
}

// One attribute of a known allocation. Booleans are 32-bit, as applications read them.
CUresult pointer_attribute(const char* function, void* data, CUpointer_attribute attribute,
                           CUdeviceptr address, const Allocation& allocation) {
  bool device_only = allocation.kind == MemoryKind::device;
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      store(data, reinterpret_cast<CUcontext>(allocation.context));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      // Managed memory reports as device memory; IS_MANAGED tells it apart.
      store(data,
            static_cast<unsigned>(allocation.kind == MemoryKind::host ? CU_MEMORYTYPE_HOST
                                                                      : CU_MEMORYTYPE_DEVICE));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: store(data, address); return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      XCUDA_MEMORY_REQUIRE(!device_only, CUDA_ERROR_INVALID_VALUE,
                           "device memory has no host address");
      store(data, api::as_pointer(address));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
      store(data, static_cast<unsigned>(allocation.sync_memops));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
      store(data, static_cast<unsigned long long>(allocation.id));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      store(data, static_cast<unsigned>(allocation.kind == MemoryKind::managed));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      store(data, allocation.context->device());
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: store(data, 0u); return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
      store(data, static_cast<CUdeviceptr>(allocation.base));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: store(data, allocation.size); return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED: store(data, 1u); return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      store(data, static_cast<unsigned long long>(CU_MEM_HANDLE_TYPE_NONE));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      store(data, static_cast<unsigned>(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: {
      // Only the stream-ordered allocator's pools have handles; cuMemAlloc's cache has none.
      runtime::MemoryPool* pool = allocation.pool.get();
      bool named = pool && runtime::live_memory_pools().contains(pool);
      store(data, named ? reinterpret_cast<CUmemoryPool>(pool) : CUmemoryPool{});
      return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
      store(data, static_cast<unsigned long long>(allocation.id));
      return CUDA_SUCCESS;
    default:
      return api::fail(
          function, CUDA_ERROR_INVALID_VALUE,
          fmt::format("pointer attribute {} is not known", static_cast<int>(attribute)));
  }
}

// What cuPointerGetAttributes reports for memory CUDA does not know: zeros, and "no device".
void unknown_pointer_attribute(void* data, CUpointer_attribute attribute) {
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: store(data, CUcontext{}); break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: store(data, CUdeviceptr{}); break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER: store(data, static_cast<void*>(nullptr)); break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: store(data, 0ull); break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: store(data, size_t{0}); break;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: store(data, CUmemoryPool{}); break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: store(data, no_location); break;
    default: store(data, 0u); break;
  }
}

// A managed range must lie inside one managed allocation; its advice is kept per allocation.
CUresult find_managed(const char* function, CUdeviceptr address, size_t bytes) {
  XCUDA_MEMORY_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED,
                       "cuInit has not been called");
  XCUDA_MEMORY_REQUIRE(bytes > 0, CUDA_ERROR_INVALID_VALUE, "range is empty");
  if (CUresult status = api::check_device_range(function, address, bytes, "managed");
      status != CUDA_SUCCESS)
    return status;
  XCUDA_MEMORY_REQUIRE(runtime::memory_registry().find(address)->kind == MemoryKind::managed,
                       CUDA_ERROR_INVALID_VALUE, "range is not managed memory");
  return CUDA_SUCCESS;
}

// A location as cuMemAdvise/cuMemPrefetchAsync take it, as a device number (-1 the CPU).
CUresult location_device(const char* function, CUmemLocation location, int& device) {
  switch (location.type) {
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: device = cpu_location; return CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_DEVICE:
      XCUDA_MEMORY_REQUIRE(location.id >= 0 && location.id < runtime::backend().device_count(),
                           CUDA_ERROR_INVALID_DEVICE,
                           fmt::format("device {} does not exist", location.id));
      device = location.id;
      return CUDA_SUCCESS;
    default:
      return api::fail(
          function, CUDA_ERROR_INVALID_VALUE,
          fmt::format("location type {} is not known", static_cast<int>(location.type)));
  }
}

// The reverse, for the _TYPE/_ID range attributes and the CUdevice forms of the calls.
CUmemLocation device_location(CUdevice device) {
  if (device == cpu_location) return CUmemLocation{CU_MEM_LOCATION_TYPE_HOST, 0};
  if (device == no_location) return CUmemLocation{CU_MEM_LOCATION_TYPE_INVALID, 0};
  return CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, device};
}

CUresult prefetch(const char* function, CUdeviceptr address, size_t bytes, CUmemLocation location,
                  unsigned flags, CUstream stream, bool per_thread) {
  XCUDA_MEMORY_REQUIRE(flags == 0, CUDA_ERROR_INVALID_VALUE, "flags must be 0");
  if (CUresult status = find_managed(function, address, bytes); status != CUDA_SUCCESS)
    return status;
  int device = no_location;
  if (CUresult status = location_device(function, location, device); status != CUDA_SUCCESS)
    return status;
  // Nothing moves: the memory is already where every device can reach it. The stream is still
  // checked, as a real prefetch is queued on it.
  return api::submit(function, stream, per_thread, false, runtime::NodeKind::empty,
                     [=](runtime::Queue&) {
    runtime::memory_registry().update(address, [&](Allocation& allocation) {
      allocation.advice.last_prefetch_location = device;
    });
  });
}

CUresult advise(const char* function, CUdeviceptr address, size_t bytes, CUmem_advise advice,
                CUmemLocation location) {
  if (CUresult status = find_managed(function, address, bytes); status != CUDA_SUCCESS)
    return status;
  bool needs_location = advice == CU_MEM_ADVISE_SET_PREFERRED_LOCATION ||
                        advice == CU_MEM_ADVISE_SET_ACCESSED_BY ||
                        advice == CU_MEM_ADVISE_UNSET_ACCESSED_BY;
  int device = no_location;
  if (needs_location)
    if (CUresult status = location_device(function, location, device); status != CUDA_SUCCESS)
      return status;
  XCUDA_MEMORY_REQUIRE(
      advice >= CU_MEM_ADVISE_SET_READ_MOSTLY && advice <= CU_MEM_ADVISE_UNSET_ACCESSED_BY,
      CUDA_ERROR_INVALID_VALUE, fmt::format("advice {} is not known", static_cast<int>(advice)));
  runtime::memory_registry().update(address, [&](Allocation& allocation) {
    auto& state = allocation.advice;
    switch (advice) {
      case CU_MEM_ADVISE_SET_READ_MOSTLY: state.read_mostly = true; break;
      case CU_MEM_ADVISE_UNSET_READ_MOSTLY: state.read_mostly = false; break;
      case CU_MEM_ADVISE_SET_PREFERRED_LOCATION: state.preferred_location = device; break;
      case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION: state.preferred_location = no_location; break;
      case CU_MEM_ADVISE_SET_ACCESSED_BY: state.accessed_by.insert(device); break;
      case CU_MEM_ADVISE_UNSET_ACCESSED_BY: state.accessed_by.erase(device); break;
    }
  });
  return CUDA_SUCCESS;
}

CUresult range_attribute(const char* function, void* data, size_t data_bytes,
                         CUmem_range_attribute attribute, CUdeviceptr address, size_t bytes) {
  XCUDA_MEMORY_REQUIRE(data, CUDA_ERROR_INVALID_VALUE, "data pointer is null");
  if (CUresult status = find_managed(function, address, bytes); status != CUDA_SUCCESS)
    return status;
  const Allocation::ManagedAdvice advice = runtime::memory_registry().find(address)->advice;
  auto answer = [&](int value) {
    if (data_bytes != sizeof value)
      return api::fail(function, CUDA_ERROR_INVALID_VALUE,
                       fmt::format("attribute {} takes {} bytes, not {}",
                                   static_cast<int>(attribute), sizeof value, data_bytes));
    store(data, value);
    return CUDA_SUCCESS;
  };
  switch (attribute) {
    case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY: return answer(advice.read_mostly);
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION: return answer(advice.preferred_location);
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
      return answer(advice.last_prefetch_location);
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
      return answer(static_cast<int>(device_location(advice.preferred_location).type));
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
      return answer(device_location(advice.preferred_location).id);
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
      return answer(static_cast<int>(device_location(advice.last_prefetch_location).type));
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID:
      return answer(device_location(advice.last_prefetch_location).id);
    case CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY: {
      // An array of devices, padded with CU_DEVICE_INVALID.
      XCUDA_MEMORY_REQUIRE(data_bytes % sizeof(int) == 0, CUDA_ERROR_INVALID_VALUE,
                           "data size must be a multiple of 4");
      auto* devices = static_cast<int*>(data);
      size_t slots = data_bytes / sizeof(int), next = 0;
      for (int device : advice.accessed_by)
        if (next < slots) devices[next++] = device;
      while (next < slots) devices[next++] = no_location;
      return CUDA_SUCCESS;
    }
    default:
      return api::fail(function, CUDA_ERROR_INVALID_VALUE,
                       fmt::format("range attribute {} is not known", static_cast<int>(attribute)));
  }
}

CUresult register_host_memory(const char* function, void* pointer, size_t bytes, unsigned flags) {
  constexpr unsigned known = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                             CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
  XCUDA_MEMORY_REQUIRE(pointer && bytes > 0, CUDA_ERROR_INVALID_VALUE, "range is null or empty");
  XCUDA_MEMORY_REQUIRE((flags & ~known) == 0, CUDA_ERROR_INVALID_VALUE, "unknown flags");
  XCUDA_MEMORY_REQUIRE(!(flags & CU_MEMHOSTREGISTER_IOMEMORY), CUDA_ERROR_NOT_SUPPORTED,
                       "the host device has no I/O memory to map");
  CUresult status;
  runtime::Context* context = api::current_context(function, status);
  if (!context) return status;
  uintptr_t base = reinterpret_cast<uintptr_t>(pointer);
  XCUDA_MEMORY_REQUIRE(base <= UINTPTR_MAX - bytes, CUDA_ERROR_INVALID_VALUE,
                       "range wraps around the address space");
  XCUDA_MEMORY_REQUIRE(!runtime::memory_registry().overlaps(base, bytes),
                       CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                       fmt::format("[{}, +{}) overlaps memory CUDA already knows", pointer, bytes));
  Allocation allocation{base, bytes, MemoryKind::host, context, false};
  allocation.flags = flags;
  runtime::memory_registry().add(std::move(allocation));
  return CUDA_SUCCESS;
}

}  // namespace

// cuMemHostRegister (CUDA 4.0) and its _v2 (CUDA 6.5) share one signature and one meaning.
XCUDA_EXPORT CUresult cuMemHostRegister(void* pointer, size_t bytes, unsigned int flags) {
  return register_host_memory(__func__, pointer, bytes, flags);
}
XCUDA_EXPORT CUresult cuMemHostRegister_v2(void* pointer, size_t bytes, unsigned int flags) {
  return register_host_memory(__func__, pointer, bytes, flags);
}

XCUDA_EXPORT CUresult cuMemHostUnregister(void* pointer) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  XCUDA_REQUIRE(pointer, CUDA_ERROR_INVALID_VALUE, "pointer is null");
  uintptr_t base = reinterpret_cast<uintptr_t>(pointer);
  auto found = runtime::memory_registry().find(base);
  XCUDA_REQUIRE(found && found->base == base && found->kind == MemoryKind::host && !found->owned,
                CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
                fmt::format("{} is not the start of a cuMemHostRegister range", pointer));
  // Queued copies may still read the range.
  (void)found->context->synchronize();
  runtime::memory_registry().remove(base);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemHostGetFlags(unsigned int* flags, void* pointer) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  XCUDA_REQUIRE(flags && pointer, CUDA_ERROR_INVALID_VALUE, "null pointer");
  auto found = runtime::memory_registry().find(reinterpret_cast<uintptr_t>(pointer));
  XCUDA_REQUIRE(found && found->kind == MemoryKind::host, CUDA_ERROR_INVALID_VALUE,
                "pointer is not page-locked host memory");
  *flags = found->flags;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute,
                                            CUdeviceptr address) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  XCUDA_REQUIRE(data, CUDA_ERROR_INVALID_VALUE, "data pointer is null");
  XCUDA_REQUIRE(attribute != CU_POINTER_ATTRIBUTE_P2P_TOKENS, CUDA_ERROR_NOT_SUPPORTED,
                "P2P tokens exist only for GPUDirect RDMA");
  auto found = runtime::memory_registry().find(address);
  XCUDA_REQUIRE(found, CUDA_ERROR_INVALID_VALUE,
                fmt::format("{:#x} is not memory CUDA allocated, mapped or registered", address));
  return pointer_attribute(__func__, data, attribute, address, *found);
}

XCUDA_EXPORT CUresult cuPointerGetAttributes(unsigned int count, CUpointer_attribute* attributes,
                                             void** data, CUdeviceptr address) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  XCUDA_REQUIRE(count == 0 || (attributes && data), CUDA_ERROR_INVALID_VALUE, "null pointer");
  auto found = runtime::memory_registry().find(address);
  for (unsigned i = 0; i < count; ++i) {
    XCUDA_REQUIRE(data[i], CUDA_ERROR_INVALID_VALUE, fmt::format("data[{}] is null", i));
    XCUDA_REQUIRE(attributes[i] != CU_POINTER_ATTRIBUTE_P2P_TOKENS, CUDA_ERROR_NOT_SUPPORTED,
                  "P2P tokens exist only for GPUDirect RDMA");
    // Unlike cuPointerGetAttribute, memory CUDA does not know is an answer, not an error; and
    // attributes a known pointer lacks (a device allocation's host address) read as null.
    if (!found ||
        (attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER && found->kind == MemoryKind::device)) {
      unknown_pointer_attribute(data[i], attributes[i]);
      continue;
    }
    if (CUresult status = pointer_attribute(__func__, data[i], attributes[i], address, *found);
        status != CUDA_SUCCESS)
      return status;
  }
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuPointerSetAttribute(const void* value, CUpointer_attribute attribute,
                                            CUdeviceptr address) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  XCUDA_REQUIRE(value, CUDA_ERROR_INVALID_VALUE, "value pointer is null");
  XCUDA_REQUIRE(attribute == CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, CUDA_ERROR_INVALID_VALUE,
                "only CU_POINTER_ATTRIBUTE_SYNC_MEMOPS can be set");
  unsigned enabled = 0;
  std::memcpy(&enabled, value, sizeof enabled);
  bool updated = runtime::memory_registry().update(
      address, [&](Allocation& allocation) { allocation.sync_memops = enabled != 0; });
  XCUDA_REQUIRE(updated, CUDA_ERROR_INVALID_VALUE,
                fmt::format("{:#x} is not memory CUDA allocated", address));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemPrefetchAsync(CUdeviceptr address, size_t bytes, CUdevice device,
                                         CUstream stream) {
  return prefetch(__func__, address, bytes, device_location(device), 0, stream, false);
}
XCUDA_EXPORT CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr address, size_t bytes, CUdevice device,
                                              CUstream stream) {
  return prefetch(__func__, address, bytes, device_location(device), 0, stream, true);
}
XCUDA_EXPORT CUresult cuMemPrefetchAsync_v2(CUdeviceptr address, size_t bytes,
                                            CUmemLocation location, unsigned int flags,
                                            CUstream stream) {
  return prefetch(__func__, address, bytes, location, flags, stream, false);
}
XCUDA_EXPORT CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr address, size_t bytes,
                                                 CUmemLocation location, unsigned int flags,
                                                 CUstream stream) {
  return prefetch(__func__, address, bytes, location, flags, stream, true);
}

namespace {

// cuMemPrefetchBatchAsync: location k applies from range location_starts[k] on. Every range and
// location is checked before any prefetch is queued.
CUresult prefetch_batch(const char* function, const CUdeviceptr* addresses, const size_t* sizes,
                        size_t count, const CUmemLocation* locations,
                        const size_t* location_starts, size_t location_count,
                        unsigned long long flags, CUstream stream, bool per_thread) {
  XCUDA_MEMORY_REQUIRE(count > 0 && addresses && sizes, CUDA_ERROR_INVALID_VALUE,
                       "the batch names no ranges");
  XCUDA_MEMORY_REQUIRE(location_count > 0 && location_count <= count && locations &&
                           location_starts && location_starts[0] == 0,
                       CUDA_ERROR_INVALID_VALUE, "each range needs a location, from range 0 on");
  XCUDA_MEMORY_REQUIRE(flags == 0, CUDA_ERROR_INVALID_VALUE, "flags must be 0");
  for (size_t index = 0; index < location_count; ++index) {
    XCUDA_MEMORY_REQUIRE(
        location_starts[index] < count &&
            (index == 0 || location_starts[index] > location_starts[index - 1]),
        CUDA_ERROR_INVALID_VALUE, "location indices must increase and stay below count");
    int device = no_location;
    if (CUresult status = location_device(function, locations[index], device);
        status != CUDA_SUCCESS)
      return status;
  }
  for (size_t index = 0; index < count; ++index)
    if (CUresult status = find_managed(function, addresses[index], sizes[index]);
        status != CUDA_SUCCESS)
      return status;
  size_t location = 0;
  for (size_t index = 0; index < count; ++index) {
    if (location + 1 < location_count && location_starts[location + 1] == index) ++location;
    if (CUresult status = prefetch(function, addresses[index], sizes[index], locations[location],
                                   0, stream, per_thread);
        status != CUDA_SUCCESS)
      return status;
  }
  return CUDA_SUCCESS;
}

// Attaching decides which streams may touch managed memory while the GPU runs; every device
// here reaches managed memory at any time, so only the arguments and the stream are checked,
// and the attachment is queued in stream order as a real one is.
CUresult attach_memory(const char* function, CUstream stream, CUdeviceptr address, size_t bytes,
                       unsigned flags, bool per_thread) {
  XCUDA_MEMORY_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED,
                       "cuInit has not been called");
  XCUDA_MEMORY_REQUIRE(flags == CU_MEM_ATTACH_GLOBAL || flags == CU_MEM_ATTACH_HOST ||
                           flags == CU_MEM_ATTACH_SINGLE,
                       CUDA_ERROR_INVALID_VALUE,
                       "flags must be one of CU_MEM_ATTACH_GLOBAL, _HOST or _SINGLE");
  XCUDA_MEMORY_REQUIRE(flags != CU_MEM_ATTACH_SINGLE ||
                           (stream != CU_STREAM_LEGACY && (stream || per_thread)),
                       CUDA_ERROR_INVALID_VALUE,
                       "memory cannot be attached to the legacy default stream alone");
  auto found = runtime::memory_registry().find(address);
  XCUDA_MEMORY_REQUIRE(found && found->kind == MemoryKind::managed && found->base == address,
                       CUDA_ERROR_INVALID_VALUE, "not the start of a managed allocation");
  XCUDA_MEMORY_REQUIRE(bytes == 0 || bytes == found->size, CUDA_ERROR_INVALID_VALUE,
                       "only a whole allocation can be attached");
  return api::submit(function, stream, per_thread, false, runtime::NodeKind::empty,
                     [](runtime::Queue&) {});
}

}  // namespace

XCUDA_EXPORT CUresult cuMemPrefetchBatchAsync(CUdeviceptr* addresses, size_t* sizes, size_t count,
                                              CUmemLocation* locations, size_t* location_starts,
                                              size_t location_count, unsigned long long flags,
                                              CUstream stream) {
  return prefetch_batch(__func__, addresses, sizes, count, locations, location_starts,
                        location_count, flags, stream, false);
}
XCUDA_EXPORT CUresult cuMemPrefetchBatchAsync_ptsz(CUdeviceptr* addresses, size_t* sizes,
                                                   size_t count, CUmemLocation* locations,
                                                   size_t* location_starts, size_t location_count,
                                                   unsigned long long flags, CUstream stream) {
  return prefetch_batch(__func__, addresses, sizes, count, locations, location_starts,
                        location_count, flags, stream, true);
}

XCUDA_EXPORT CUresult cuStreamAttachMemAsync(CUstream stream, CUdeviceptr address, size_t bytes,
                                             unsigned int flags) {
  return attach_memory(__func__, stream, address, bytes, flags, false);
}
XCUDA_EXPORT CUresult cuStreamAttachMemAsync_ptsz(CUstream stream, CUdeviceptr address,
                                                  size_t bytes, unsigned int flags) {
  return attach_memory(__func__, stream, address, bytes, flags, true);
}

XCUDA_EXPORT CUresult cuMemAdvise(CUdeviceptr address, size_t bytes, CUmem_advise advice,
                                  CUdevice device) {
  return advise(__func__, address, bytes, advice, device_location(device));
}
XCUDA_EXPORT CUresult cuMemAdvise_v2(CUdeviceptr address, size_t bytes, CUmem_advise advice,
                                     CUmemLocation location) {
  return advise(__func__, address, bytes, advice, location);
}

XCUDA_EXPORT CUresult cuMemRangeGetAttribute(void* data, size_t data_bytes,
                                             CUmem_range_attribute attribute, CUdeviceptr address,
                                             size_t bytes) {
  return range_attribute(__func__, data, data_bytes, attribute, address, bytes);
}

XCUDA_EXPORT CUresult cuMemRangeGetAttributes(void** data, size_t* data_bytes,
                                              CUmem_range_attribute* attributes, size_t count,
                                              CUdeviceptr address, size_t bytes) {
  XCUDA_REQUIRE(count > 0 && data && data_bytes && attributes, CUDA_ERROR_INVALID_VALUE,
                "null pointer or no attributes");
  for (size_t i = 0; i < count; ++i)
    if (CUresult status =
            range_attribute(__func__, data[i], data_bytes[i], attributes[i], address, bytes);
        status != CUDA_SUCCESS)
      return status;
  return CUDA_SUCCESS;
}
