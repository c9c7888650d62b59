// The stream-ordered allocator: cuMemAllocAsync, cuMemFreeAsync, cuMemAllocFromPoolAsync and
// the memory pools behind them. Memory is handed out at once (the earliest point the stream
// could need it) and given back to its pool only when the stream reaches the free, so work
// queued before the free may still use it.
#include <map>
#include <mutex>

#include "src/graph.h"
#include "src/memory.h"
#include "src/peer_access.h"

#include "runtime/backend.h"
#include "runtime/graph_memory.h"
#include "runtime/memory_pool.h"

using namespace xcuda;
using runtime::Allocation;
using runtime::MemoryKind;
using runtime::MemoryPool;

namespace {

MemoryPool* as_pool(CUmemoryPool handle) { return reinterpret_cast<MemoryPool*>(handle); }
CUmemoryPool as_handle(MemoryPool* pool) { return reinterpret_cast<CUmemoryPool>(pool); }

CUresult check_device(const char* function, CUdevice device) {
  XCUDA_MEMORY_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED,
                       "cuInit has not been called");
  XCUDA_MEMORY_REQUIRE(device >= 0 && device < runtime::backend().device_count(),
                       CUDA_ERROR_INVALID_DEVICE, fmt::format("device {} does not exist", device));
  return CUDA_SUCCESS;
}

CUresult check_pool(const char* function, CUmemoryPool pool) {
  XCUDA_MEMORY_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED,
                       "cuInit has not been called");
  XCUDA_MEMORY_REQUIRE(pool && runtime::live_memory_pools().contains(pool),
                       CUDA_ERROR_INVALID_VALUE, "not a live memory pool");
  return CUDA_SUCCESS;
}

CUresult allocate_from_pool(const char* function, CUdeviceptr* result, size_t bytes,
                            CUmemoryPool handle, CUstream stream_handle, bool per_thread) {
  XCUDA_MEMORY_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  XCUDA_MEMORY_REQUIRE(bytes > 0, CUDA_ERROR_INVALID_VALUE, "cannot allocate 0 bytes");
  CUresult status;
  runtime::Stream* stream = api::resolve_stream(function, stream_handle, per_thread, status);
  if (!stream) return status;
  if (handle && (status = check_pool(function, handle)) != CUDA_SUCCESS) return status;
  // In a capture, the allocation becomes an allocation node of the capture's graph.
  bool captured = false;
  if ((status = api::capture_allocation(function, *stream, bytes, result, captured)) !=
          CUDA_SUCCESS ||
      captured)
    return status;
  MemoryPool* pool =
      handle ? as_pool(handle) : runtime::current_memory_pool(stream->context().device());
  Expected<void*> memory = pool->allocate(bytes);
  if (!memory) return api::fail(function, memory.error());
  Allocation allocation{reinterpret_cast<uintptr_t>(*memory), bytes, MemoryKind::device,
                        &stream->context()};
  allocation.pool = pool->shared_from_this();
  runtime::memory_registry().add(std::move(allocation));
  *result = reinterpret_cast<CUdeviceptr>(*memory);
  return CUDA_SUCCESS;
}

CUresult free_async(const char* function, CUdeviceptr address, CUstream stream_handle,
                    bool per_thread) {
  CUresult status;
  runtime::Stream* stream = api::resolve_stream(function, stream_handle, per_thread, status);
  if (!stream) return status;
  bool handled = false;
  if ((status = api::capture_free(function, *stream, address, handled)) != CUDA_SUCCESS ||
      handled ||
      (status = api::free_graph_memory(function, address, stream, handled)) != CUDA_SUCCESS ||
      handled)
    return status;
  auto found = runtime::memory_registry().find(address);
  XCUDA_MEMORY_REQUIRE(
      found && found->owned && found->base == address && found->kind == MemoryKind::device,
      CUDA_ERROR_INVALID_VALUE, "pointer was not returned by a device allocation call");
  runtime::memory_registry().remove(address);
  // The queue runs the release once the stream's earlier work is done; the description owns
  // what it needs (the pool stays alive through it).
  auto* pending = new Allocation(*found);
  stream->order_for_new_work().host_function(
      [](void* data) {
        std::unique_ptr<Allocation> allocation(static_cast<Allocation*>(data));
        if (Status released = api::release_memory(*allocation); !released)
          runtime::logger().error("cuMemFreeAsync: {}", released.error().message);
      },
      pending);
  return CUDA_SUCCESS;
}

// Pool attributes are int (the reuse switches) or cuuint64_t (sizes), as cuda.h documents.
bool is_reuse_attribute(CUmemPool_attribute attribute) {
  return attribute == CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES ||
         attribute == CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC ||
         attribute == CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
}

// What cuMemPoolSetAccess granted other devices, per pool; the pool's own device always has
// read-write access and is not recorded. A destroyed pool's entry goes with it.
struct PoolAccess {
  std::mutex mutex;
  std::map<MemoryPool*, std::map<int, CUmemAccess_flags>> granted;
};

PoolAccess& pool_access() {
  static auto& access = *new PoolAccess;
  return access;
}

// The device a location-based pool query names (cuMemGetDefaultMemPool and friends). Only device
// locations with pinned allocations have pools here: host, NUMA and managed pools do not exist.
CUresult pool_device(const char* function, const CUmemLocation* location,
                     CUmemAllocationType type, int& device) {
  XCUDA_MEMORY_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED,
                       "cuInit has not been called");
  XCUDA_MEMORY_REQUIRE(location, CUDA_ERROR_INVALID_VALUE, "location is null");
  XCUDA_MEMORY_REQUIRE(type == CU_MEM_ALLOCATION_TYPE_PINNED || type == CU_MEM_ALLOCATION_TYPE_MANAGED,
                       CUDA_ERROR_INVALID_VALUE, "allocation type must be pinned or managed");
  switch (location->type) {
    case CU_MEM_LOCATION_TYPE_DEVICE: break;
    case CU_MEM_LOCATION_TYPE_NONE:
      XCUDA_MEMORY_REQUIRE(type == CU_MEM_ALLOCATION_TYPE_MANAGED, CUDA_ERROR_INVALID_VALUE,
                           "only managed pools may have no location");
      [[fallthrough]];
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
      return api::fail(function, CUDA_ERROR_NOT_SUPPORTED, "only device memory pools exist");
    default:
      return api::fail(function, CUDA_ERROR_INVALID_VALUE,
                       fmt::format("location type {} has no pools", int(location->type)));
  }
  XCUDA_MEMORY_REQUIRE(type == CU_MEM_ALLOCATION_TYPE_PINNED, CUDA_ERROR_NOT_SUPPORTED,
                       "managed memory pools are not supported");
  XCUDA_MEMORY_REQUIRE(location->id >= 0 && location->id < runtime::backend().device_count(),
                       CUDA_ERROR_INVALID_VALUE,
                       fmt::format("device {} does not exist", location->id));
  device = location->id;
  return CUDA_SUCCESS;
}

// cuMemGetDefaultMemPool/cuMemGetMemPool: `pool_of` the device `location` names.
template <class PoolOf>
CUresult location_pool(const char* function, CUmemoryPool* result, const CUmemLocation* location,
                       CUmemAllocationType type, PoolOf pool_of) {
  XCUDA_MEMORY_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  int device = 0;
  if (CUresult status = pool_device(function, location, type, device); status != CUDA_SUCCESS)
    return status;
  *result = as_handle(pool_of(device));
  return CUDA_SUCCESS;
}

}  // namespace

XCUDA_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* result, size_t bytes, CUstream stream) {
  return allocate_from_pool(__func__, result, bytes, nullptr, stream, false);
}
XCUDA_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* result, size_t bytes, CUstream stream) {
  return allocate_from_pool(__func__, result, bytes, nullptr, stream, true);
}
XCUDA_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* result, size_t bytes, CUmemoryPool pool,
                                              CUstream stream) {
  XCUDA_REQUIRE(pool, CUDA_ERROR_INVALID_VALUE, "pool is null");
  return allocate_from_pool(__func__, result, bytes, pool, stream, false);
}
XCUDA_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* result, size_t bytes,
                                                   CUmemoryPool pool, CUstream stream) {
  XCUDA_REQUIRE(pool, CUDA_ERROR_INVALID_VALUE, "pool is null");
  return allocate_from_pool(__func__, result, bytes, pool, stream, true);
}
XCUDA_EXPORT CUresult cuMemFreeAsync(CUdeviceptr address, CUstream stream) {
  return free_async(__func__, address, stream, false);
}
XCUDA_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr address, CUstream stream) {
  return free_async(__func__, address, stream, true);
}

XCUDA_EXPORT CUresult cuMemPoolCreate(CUmemoryPool* result, const CUmemPoolProps* properties) {
  XCUDA_REQUIRE(result && properties, CUDA_ERROR_INVALID_VALUE, "null pointer");
  XCUDA_REQUIRE(properties->allocType == CU_MEM_ALLOCATION_TYPE_PINNED, CUDA_ERROR_INVALID_VALUE,
                "allocation type must be CU_MEM_ALLOCATION_TYPE_PINNED");
  XCUDA_REQUIRE(properties->location.type == CU_MEM_LOCATION_TYPE_DEVICE, CUDA_ERROR_NOT_SUPPORTED,
                "only device pools are supported");
  XCUDA_REQUIRE(properties->handleTypes == CU_MEM_HANDLE_TYPE_NONE, CUDA_ERROR_NOT_SUPPORTED,
                "pools shareable with other processes are not supported");
  if (CUresult status = check_device(__func__, properties->location.id); status != CUDA_SUCCESS)
    return status;
  *result = as_handle(runtime::create_memory_pool(properties->location.id, properties->maxSize));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  if (CUresult status = check_pool(__func__, pool); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE(runtime::destroy_memory_pool(as_pool(pool)), CUDA_ERROR_INVALID_VALUE,
                "a device's default memory pool cannot be destroyed");
  std::lock_guard lock(pool_access().mutex);
  pool_access().granted.erase(as_pool(pool));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep_bytes) {
  if (CUresult status = check_pool(__func__, pool); status != CUDA_SUCCESS) return status;
  as_pool(pool)->trim_to(keep_bytes);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool handle, CUmemPool_attribute attribute,
                                            void* value) {
  if (CUresult status = check_pool(__func__, handle); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE(value, CUDA_ERROR_INVALID_VALUE, "value pointer is null");
  MemoryPool* pool = as_pool(handle);
  // Reuse policies only widen what a pool may reuse; this pool reuses a block only after the
  // stream reached its free, which every policy allows.
  if (is_reuse_attribute(attribute)) return CUDA_SUCCESS;
  cuuint64_t bytes = *static_cast<const cuuint64_t*>(value);
  switch (attribute) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: pool->set_release_threshold(bytes); return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      XCUDA_REQUIRE(bytes == 0, CUDA_ERROR_INVALID_VALUE,
                    "a high watermark can only be reset to 0");
      if (attribute == CU_MEMPOOL_ATTR_USED_MEM_HIGH)
        pool->reset_used_high();
      else
        pool->reset_reserved_high();
      return CUDA_SUCCESS;
    default:
      return api::fail(__func__, CUDA_ERROR_INVALID_VALUE,
                       fmt::format("attribute {} cannot be set", static_cast<int>(attribute)));
  }
}

XCUDA_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool handle, CUmemPool_attribute attribute,
                                            void* value) {
  if (CUresult status = check_pool(__func__, handle); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE(value, CUDA_ERROR_INVALID_VALUE, "value pointer is null");
  MemoryPool* pool = as_pool(handle);
  if (is_reuse_attribute(attribute)) {
    *static_cast<int*>(value) = 1;
    return CUDA_SUCCESS;
  }
  MemoryPool::Usage usage = pool->usage();
  cuuint64_t& result = *static_cast<cuuint64_t*>(value);
  switch (attribute) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: result = pool->release_threshold(); break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: result = usage.reserved; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: result = usage.reserved_high; break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: result = usage.used; break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: result = usage.used_high; break;
    default:
      return api::fail(__func__, CUDA_ERROR_INVALID_VALUE,
                       fmt::format("unknown attribute {}", static_cast<int>(attribute)));
  }
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* result, CUdevice device) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  if (CUresult status = check_device(__func__, device); status != CUDA_SUCCESS) return status;
  *result = as_handle(runtime::default_memory_pool(device));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool* result, CUdevice device) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  if (CUresult status = check_device(__func__, device); status != CUDA_SUCCESS) return status;
  *result = as_handle(runtime::current_memory_pool(device));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceSetMemPool(CUdevice device, CUmemoryPool pool) {
  if (CUresult status = check_device(__func__, device); status != CUDA_SUCCESS) return status;
  if (CUresult status = check_pool(__func__, pool); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE(as_pool(pool)->device() == device, CUDA_ERROR_INVALID_DEVICE,
                "the pool belongs to another device");
  runtime::set_current_memory_pool(device, as_pool(pool));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceGraphMemTrim(CUdevice device) {
  if (CUresult status = check_device(__func__, device); status != CUDA_SUCCESS) return status;
  runtime::graph_memory_pool(device).trim_to(0);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attribute,
                                                   void* value) {
  if (CUresult status = check_device(__func__, device); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE(value, CUDA_ERROR_INVALID_VALUE, "value pointer is null");
  MemoryPool::Usage usage = runtime::graph_memory_pool(device).usage();
  cuuint64_t& result = *static_cast<cuuint64_t*>(value);
  switch (attribute) {
    case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT: result = usage.used; break;
    case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH: result = usage.used_high; break;
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT: result = usage.reserved; break;
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: result = usage.reserved_high; break;
    default:
      return api::fail(__func__, CUDA_ERROR_INVALID_VALUE,
                       fmt::format("unknown attribute {}", static_cast<int>(attribute)));
  }
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attribute,
                                                   void* value) {
  if (CUresult status = check_device(__func__, device); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE(value, CUDA_ERROR_INVALID_VALUE, "value pointer is null");
  XCUDA_REQUIRE(attribute == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH ||
                    attribute == CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH,
                CUDA_ERROR_INVALID_VALUE, "only the high watermarks can be set");
  XCUDA_REQUIRE(*static_cast<const cuuint64_t*>(value) == 0, CUDA_ERROR_INVALID_VALUE,
                "a high watermark can only be reset to 0");
  MemoryPool& pool = runtime::graph_memory_pool(device);
  if (attribute == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH)
    pool.reset_used_high();
  else
    pool.reset_reserved_high();
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemGetDefaultMemPool(CUmemoryPool* result, CUmemLocation* location,
                                             CUmemAllocationType type) {
  return location_pool(__func__, result, location, type,
                       [](int device) { return runtime::default_memory_pool(device); });
}

XCUDA_EXPORT CUresult cuMemGetMemPool(CUmemoryPool* result, CUmemLocation* location,
                                      CUmemAllocationType type) {
  return location_pool(__func__, result, location, type,
                       [](int device) { return runtime::current_memory_pool(device); });
}

XCUDA_EXPORT CUresult cuMemSetMemPool(CUmemLocation* location, CUmemAllocationType type,
                                      CUmemoryPool pool) {
  int device = 0;
  if (CUresult status = pool_device(__func__, location, type, device); status != CUDA_SUCCESS)
    return status;
  if (CUresult status = check_pool(__func__, pool); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE(as_pool(pool)->device() == device, CUDA_ERROR_INVALID_VALUE,
                "the pool belongs to another location");
  runtime::set_current_memory_pool(device, as_pool(pool));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemPoolSetAccess(CUmemoryPool handle, const CUmemAccessDesc* map,
                                         size_t count) {
  if (CUresult status = check_pool(__func__, handle); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE(map || count == 0, CUDA_ERROR_INVALID_VALUE, "descriptor array is null");
  MemoryPool* pool = as_pool(handle);
  // Every descriptor is checked before any takes effect.
  for (size_t index = 0; index < count; ++index) {
    const CUmemAccessDesc& access = map[index];
    XCUDA_REQUIRE(access.location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
                      access.location.id >= 0 &&
                      access.location.id < runtime::backend().device_count(),
                  CUDA_ERROR_INVALID_VALUE, fmt::format("descriptor {} names no device", index));
    XCUDA_REQUIRE(access.flags == CU_MEM_ACCESS_FLAGS_PROT_NONE ||
                      access.flags == CU_MEM_ACCESS_FLAGS_PROT_READ ||
                      access.flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                  CUDA_ERROR_INVALID_VALUE, fmt::format("descriptor {} has unknown flags", index));
    int device = access.location.id;
    XCUDA_REQUIRE(device != pool->device() || access.flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                  CUDA_ERROR_INVALID_VALUE, "the pool's own device keeps read-write access");
    XCUDA_REQUIRE(device == pool->device() || access.flags == CU_MEM_ACCESS_FLAGS_PROT_NONE ||
                      api::can_access_peer(device, pool->device()),
                  CUDA_ERROR_INVALID_VALUE,
                  fmt::format("device {} cannot access the memory of device {}", device,
                              pool->device()));
  }
  std::lock_guard lock(pool_access().mutex);
  auto& granted = pool_access().granted[pool];
  for (size_t index = 0; index < count; ++index)
    if (map[index].location.id != pool->device())
      granted[map[index].location.id] = map[index].flags;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool handle,
                                         CUmemLocation* location) {
  if (CUresult status = check_pool(__func__, handle); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE(flags && location, CUDA_ERROR_INVALID_VALUE, "null pointer");
  XCUDA_REQUIRE(location->type == CU_MEM_LOCATION_TYPE_DEVICE && location->id >= 0 &&
                    location->id < runtime::backend().device_count(),
                CUDA_ERROR_INVALID_VALUE, "location names no device");
  MemoryPool* pool = as_pool(handle);
  *flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (location->id == pool->device()) return CUDA_SUCCESS;
  std::lock_guard lock(pool_access().mutex);
  *flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  if (auto found = pool_access().granted.find(pool); found != pool_access().granted.end())
    if (auto device = found->second.find(location->id); device != found->second.end())
      *flags = device->second;
  return CUDA_SUCCESS;
}
