// Memory: allocation, copies and fills. On the host backend a device pointer is a host
// pointer, but every device-side range is still checked against the live allocations so a
// wrong pointer is an error code, not a crash.
#include <unistd.h>

#include <algorithm>

#include "src/graph.h"
#include "src/memory.h"

#include "runtime/backend.h"
#include "runtime/graph_memory.h"
#include "runtime/memory.h"
#include "runtime/memory_pool.h"

using namespace xcuda;
using runtime::Allocation;
using runtime::Context;
using runtime::MemoryKind;

namespace xcuda::api {

CUresult check_device_range(const char* function, CUdeviceptr address, size_t bytes,
                            const char* which) {
  // Allocations back to back cover a range together: virtual memory mapped piecewise into one
  // reservation is used as one range, as NVIDIA's driver allows.
  CUdeviceptr at = address;
  do {
    auto found = runtime::memory_registry().find(at);
    if (!found)
      return api::fail(function, CUDA_ERROR_INVALID_VALUE,
                       fmt::format("{} range [{:#x}, +{}) is not inside live allocations", which,
                                   address, bytes));
    at = found->base + std::max<size_t>(found->size, 1);
  } while (at - address < bytes);
  return CUDA_SUCCESS;
}

CUresult submit(const char* function, CUstream handle, bool per_thread, bool synchronous,
                runtime::NodeKind kind, const std::function<void(runtime::Queue&)>& enqueue) {
  CUresult status;
  runtime::Stream* stream = api::resolve_stream(function, handle, per_thread, status);
  if (!stream) return status;
  if (synchronous && (status = check_unsafe_call(function)) != CUDA_SUCCESS) return status;
  bool captured = false;
  status = capture_work(
      function, *stream, kind, [enqueue](runtime::Stream& target) { enqueue(target.queue()); },
      captured);
  if (status != CUDA_SUCCESS || captured) return status;
  enqueue(stream->order_for_new_work());
  if (synchronous) XCUDA_MEMORY_CHECK_STATUS(stream->queue().synchronize());
  return CUDA_SUCCESS;
}

Status release_memory(const runtime::Allocation& allocation) {
  void* pointer = reinterpret_cast<void*>(allocation.base);
  if (allocation.pool) {
    allocation.pool->release(pointer, allocation.size);
    return {};
  }
  return runtime::backend().release(allocation.context->device(), pointer);
}

}  // namespace xcuda::api

namespace {

using api::as_pointer;
using api::check_device_range;

CUresult allocate(const char* function, void** result, size_t bytes, MemoryKind kind,
                  unsigned flags = 0) {
  XCUDA_MEMORY_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  XCUDA_MEMORY_REQUIRE(bytes > 0, CUDA_ERROR_INVALID_VALUE, "cannot allocate 0 bytes");
  CUresult status;
  Context* context = api::current_context(function, status);
  if (!context) return status;
  if ((status = api::check_unsafe_call(function)) != CUDA_SUCCESS) return status;
  Allocation allocation{0, bytes, kind, context};
  allocation.flags = flags;
  // Device memory comes from the device's pool; host and managed memory straight from the
  // backend, since programs allocate them rarely.
  if (kind == MemoryKind::device)
    allocation.pool = runtime::device_allocation_pool(context->device());
  Expected<void*> memory = allocation.pool ? allocation.pool->allocate(bytes)
                                           : runtime::backend().allocate(context->device(), bytes);
  if (!memory) return api::fail(function, memory.error());
  allocation.base = reinterpret_cast<uintptr_t>(*memory);
  runtime::memory_registry().add(std::move(allocation));
  *result = *memory;
  return CUDA_SUCCESS;
}

CUresult release(const char* function, void* pointer, MemoryKind kind) {
  if (!pointer) return CUDA_SUCCESS;
  XCUDA_MEMORY_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED,
                       "cuInit has not been called");
  uintptr_t base = reinterpret_cast<uintptr_t>(pointer);
  if (kind == MemoryKind::device && runtime::find_graph_allocation(base)) {
    if (CUresult status = api::check_unsafe_call(function); status != CUDA_SUCCESS) return status;
    // Freeing waits for the device, as below.
    if (auto found = runtime::memory_registry().find(base)) (void)found->context->synchronize();
    bool handled = false;
    return api::free_graph_memory(function, base, nullptr, handled);
  }
  // Looked at in place, and then moved out: copying an Allocation costs as much as a small
  // allocation from the pool.
  Context* context = nullptr;
  runtime::memory_registry().update(base, [&](const Allocation& found) {
    if (found.owned && found.base == base &&
        (found.kind == MemoryKind::host) == (kind == MemoryKind::host))
      context = found.context;
  });
  XCUDA_MEMORY_REQUIRE(context, CUDA_ERROR_INVALID_VALUE,
                       "pointer was not returned by an allocation call");
  if (CUresult status = api::check_unsafe_call(function); status != CUDA_SUCCESS) return status;
  // Freeing waits for the device, as cuMemFree does on a real GPU.
  (void)context->synchronize();
  std::optional<Allocation> removed = runtime::memory_registry().remove(base);
  XCUDA_MEMORY_REQUIRE(removed, CUDA_ERROR_INVALID_VALUE, "pointer was freed meanwhile");
  XCUDA_MEMORY_CHECK_STATUS(api::release_memory(*removed));
  return CUDA_SUCCESS;
}

// Enqueues the copy on the stream; synchronous entry points then wait for it.
CUresult copy(const char* function, void* destination, const void* source, size_t bytes,
              CUstream handle, bool per_thread, bool synchronous) {
  if (bytes == 0) return CUDA_SUCCESS;
  XCUDA_MEMORY_REQUIRE(destination && source, CUDA_ERROR_INVALID_VALUE, "null pointer");
  return api::submit(function, handle, per_thread, synchronous, runtime::NodeKind::memcpy,
                     [=](runtime::Queue& queue) { queue.copy(destination, source, bytes); });
}

CUresult fill(const char* function, CUdeviceptr destination, uint32_t pattern,
              uint32_t pattern_bytes, size_t count, CUstream handle, bool per_thread,
              bool synchronous) {
  if (count == 0) return CUDA_SUCCESS;
  XCUDA_MEMORY_REQUIRE(destination % pattern_bytes == 0, CUDA_ERROR_INVALID_VALUE,
                       "destination is not aligned to the element size");
  if (CUresult status =
          check_device_range(function, destination, count * pattern_bytes, "destination");
      status != CUDA_SUCCESS)
    return status;
  return api::submit(function, handle, per_thread, synchronous, runtime::NodeKind::memset,
                     [=](runtime::Queue& queue) {
                       queue.fill(as_pointer(destination), pattern, pattern_bytes, count);
                     });
}

// Copies that name device memory on one side check it, then share `copy`.
CUresult copy_to_device(const char* function, CUdeviceptr destination, const void* source,
                        size_t bytes, CUstream stream, bool per_thread, bool synchronous) {
  if (bytes && check_device_range(function, destination, bytes, "destination") != CUDA_SUCCESS)
    return CUDA_ERROR_INVALID_VALUE;
  return copy(function, as_pointer(destination), source, bytes, stream, per_thread, synchronous);
}

CUresult copy_from_device(const char* function, void* destination, CUdeviceptr source, size_t bytes,
                          CUstream stream, bool per_thread, bool synchronous) {
  if (bytes && check_device_range(function, source, bytes, "source") != CUDA_SUCCESS)
    return CUDA_ERROR_INVALID_VALUE;
  return copy(function, destination, as_pointer(source), bytes, stream, per_thread, synchronous);
}

CUresult copy_device_to_device(const char* function, CUdeviceptr destination, CUdeviceptr source,
                               size_t bytes, CUstream stream, bool per_thread, bool synchronous) {
  if (bytes && check_device_range(function, source, bytes, "source") != CUDA_SUCCESS)
    return CUDA_ERROR_INVALID_VALUE;
  return copy_to_device(function, destination, as_pointer(source), bytes, stream, per_thread,
                        synchronous);
}

}  // namespace

XCUDA_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* result, size_t bytes) {
  return allocate(__func__, reinterpret_cast<void**>(result), bytes, MemoryKind::device);
}

XCUDA_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* result, size_t* pitch, size_t width_bytes,
                                         size_t height, unsigned int element_bytes) {
  XCUDA_REQUIRE(pitch, CUDA_ERROR_INVALID_VALUE, "pitch output pointer is null");
  XCUDA_REQUIRE(element_bytes == 4 || element_bytes == 8 || element_bytes == 16,
                CUDA_ERROR_INVALID_VALUE, "element size must be 4, 8 or 16");
  // Rows start on 512-byte boundaries, the texture alignment GPUs report.
  size_t row = (width_bytes + 511) / 512 * 512;
  CUresult status =
      allocate(__func__, reinterpret_cast<void**>(result), row * height, MemoryKind::device);
  if (status == CUDA_SUCCESS) *pitch = row;
  return status;
}

XCUDA_EXPORT CUresult cuMemFree_v2(CUdeviceptr address) {
  return release(__func__, as_pointer(address), MemoryKind::device);
}

XCUDA_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* result, size_t bytes, unsigned int flags) {
  XCUDA_REQUIRE(flags == CU_MEM_ATTACH_GLOBAL || flags == CU_MEM_ATTACH_HOST,
                CUDA_ERROR_INVALID_VALUE, "flags must be CU_MEM_ATTACH_GLOBAL or _HOST");
  return allocate(__func__, reinterpret_cast<void**>(result), bytes, MemoryKind::managed, flags);
}

XCUDA_EXPORT CUresult cuMemAllocHost_v2(void** result, size_t bytes) {
  return allocate(__func__, result, bytes, MemoryKind::host);
}

XCUDA_EXPORT CUresult cuMemHostAlloc(void** result, size_t bytes, unsigned int flags) {
  constexpr unsigned known =
      CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
  XCUDA_REQUIRE((flags & ~known) == 0, CUDA_ERROR_INVALID_VALUE, "unknown flags");
  return allocate(__func__, result, bytes, MemoryKind::host, flags);
}

XCUDA_EXPORT CUresult cuMemFreeHost(void* pointer) {
  return release(__func__, pointer, MemoryKind::host);
}

XCUDA_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* result, void* host,
                                                   unsigned int flags) {
  XCUDA_REQUIRE(result && host, CUDA_ERROR_INVALID_VALUE, "null pointer");
  XCUDA_REQUIRE(flags == 0, CUDA_ERROR_INVALID_VALUE, "flags must be 0");
  auto found = runtime::memory_registry().find(reinterpret_cast<uintptr_t>(host));
  XCUDA_REQUIRE(found && found->kind == MemoryKind::host, CUDA_ERROR_INVALID_VALUE,
                "pointer is not page-locked host memory");
  *result = reinterpret_cast<CUdeviceptr>(host);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  CUresult status;
  Context* context = api::current_context(__func__, status);
  if (!context) return status;
  const auto& properties = runtime::backend().properties(context->device());
  if (total_bytes) *total_bytes = properties.total_memory;
  if (free_bytes) {
    long pages = sysconf(_SC_AVPHYS_PAGES);
    *free_bytes =
        pages > 0 ? static_cast<size_t>(pages) * sysconf(_SC_PAGESIZE) : properties.total_memory;
  }
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr* base, size_t* size,
                                              CUdeviceptr address) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  auto found = runtime::memory_registry().find(address);
  XCUDA_REQUIRE(found, CUDA_ERROR_NOT_FOUND, "address is not inside a live allocation");
  if (base) *base = found->base;
  if (size) *size = found->size;
  return CUDA_SUCCESS;
}

// Copies. The _ptds/_ptsz variants differ only in what stream 0 means.
XCUDA_EXPORT CUresult cuMemcpy(CUdeviceptr destination, CUdeviceptr source, size_t bytes) {
  return copy(__func__, as_pointer(destination), as_pointer(source), bytes, nullptr, false, true);
}
XCUDA_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr destination, CUdeviceptr source, size_t bytes) {
  return copy(__func__, as_pointer(destination), as_pointer(source), bytes, nullptr, true, true);
}
XCUDA_EXPORT CUresult cuMemcpyAsync(CUdeviceptr destination, CUdeviceptr source, size_t bytes,
                                    CUstream stream) {
  return copy(__func__, as_pointer(destination), as_pointer(source), bytes, stream, false, false);
}
XCUDA_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr destination, CUdeviceptr source, size_t bytes,
                                         CUstream stream) {
  return copy(__func__, as_pointer(destination), as_pointer(source), bytes, stream, true, false);
}

XCUDA_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr destination, const void* source, size_t bytes) {
  return copy_to_device(__func__, destination, source, bytes, nullptr, false, true);
}
XCUDA_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr destination, const void* source,
                                           size_t bytes) {
  return copy_to_device(__func__, destination, source, bytes, nullptr, true, true);
}
XCUDA_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr destination, const void* source,
                                           size_t bytes, CUstream stream) {
  return copy_to_device(__func__, destination, source, bytes, stream, false, false);
}
XCUDA_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr destination, const void* source,
                                                size_t bytes, CUstream stream) {
  return copy_to_device(__func__, destination, source, bytes, stream, true, false);
}

XCUDA_EXPORT CUresult cuMemcpyDtoH_v2(void* destination, CUdeviceptr source, size_t bytes) {
  return copy_from_device(__func__, destination, source, bytes, nullptr, false, true);
}
XCUDA_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void* destination, CUdeviceptr source, size_t bytes) {
  return copy_from_device(__func__, destination, source, bytes, nullptr, true, true);
}
XCUDA_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* destination, CUdeviceptr source, size_t bytes,
                                           CUstream stream) {
  return copy_from_device(__func__, destination, source, bytes, stream, false, false);
}
XCUDA_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void* destination, CUdeviceptr source, size_t bytes,
                                                CUstream stream) {
  return copy_from_device(__func__, destination, source, bytes, stream, true, false);
}

XCUDA_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr destination, CUdeviceptr source, size_t bytes) {
  return copy_device_to_device(__func__, destination, source, bytes, nullptr, false, true);
}
XCUDA_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr destination, CUdeviceptr source,
                                           size_t bytes) {
  return copy_device_to_device(__func__, destination, source, bytes, nullptr, true, true);
}
XCUDA_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr destination, CUdeviceptr source,
                                           size_t bytes, CUstream stream) {
  return copy_device_to_device(__func__, destination, source, bytes, stream, false, false);
}
XCUDA_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr destination, CUdeviceptr source,
                                                size_t bytes, CUstream stream) {
  return copy_device_to_device(__func__, destination, source, bytes, stream, true, false);
}

// Fills: cuMemsetD8/D16/D32 and their async and per-thread forms.
#define XCUDA_FILL_ENTRY_POINTS(bits, type)                                                       \
  XCUDA_EXPORT CUresult cuMemsetD##bits##_v2(CUdeviceptr destination, type value, size_t count) { \
    return fill(__func__, destination, value, bits / 8, count, nullptr, false, true);             \
  }                                                                                               \
  XCUDA_EXPORT CUresult cuMemsetD##bits##_v2_ptds(CUdeviceptr destination, type value,            \
                                                  size_t count) {                                 \
    return fill(__func__, destination, value, bits / 8, count, nullptr, true, true);              \
  }                                                                                               \
  XCUDA_EXPORT CUresult cuMemsetD##bits##Async(CUdeviceptr destination, type value, size_t count, \
                                               CUstream stream) {                                 \
    return fill(__func__, destination, value, bits / 8, count, stream, false, false);             \
  }                                                                                               \
  XCUDA_EXPORT CUresult cuMemsetD##bits##Async_ptsz(CUdeviceptr destination, type value,          \
                                                    size_t count, CUstream stream) {              \
    return fill(__func__, destination, value, bits / 8, count, stream, true, false);              \
  }

XCUDA_FILL_ENTRY_POINTS(8, unsigned char)
XCUDA_FILL_ENTRY_POINTS(16, unsigned short)
XCUDA_FILL_ENTRY_POINTS(32, unsigned int)

namespace {

// cuMemcpyBatchAsync: every copy is checked before any is queued. `failure_index`, when given,
// names the copy an error is about, or SIZE_MAX for an error about the whole batch.
CUresult copy_batch(const char* function, const CUdeviceptr* destinations,
                    const CUdeviceptr* sources, const size_t* sizes, size_t count,
                    const CUmemcpyAttributes* attributes, const size_t* attribute_starts,
                    size_t attribute_count, size_t* failure_index, CUstream stream,
                    bool per_thread) {
  if (failure_index) *failure_index = SIZE_MAX;
  XCUDA_MEMORY_REQUIRE(count > 0 && destinations && sources && sizes, CUDA_ERROR_INVALID_VALUE,
                       "the batch names no copies");
  XCUDA_MEMORY_REQUIRE(attribute_count > 0 && attribute_count <= count && attributes &&
                           attribute_starts,
                       CUDA_ERROR_INVALID_VALUE, "each copy needs attributes");
  XCUDA_MEMORY_REQUIRE(stream != CU_STREAM_LEGACY && (stream || per_thread),
                       CUDA_ERROR_INVALID_VALUE, "the legacy default stream cannot take a batch");
  XCUDA_MEMORY_REQUIRE(attribute_starts[0] == 0, CUDA_ERROR_INVALID_VALUE,
                       "the first attributes must apply from copy 0");
  for (size_t index = 0; index < attribute_count; ++index) {
    XCUDA_MEMORY_REQUIRE(
        attribute_starts[index] < count &&
            (index == 0 || attribute_starts[index] > attribute_starts[index - 1]),
        CUDA_ERROR_INVALID_VALUE, "attribute indices must increase and stay below count");
    const CUmemcpyAttributes& attribute = attributes[index];
    bool known_order = attribute.srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_STREAM ||
                       attribute.srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL ||
                       attribute.srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
    bool known_flags = (attribute.flags & ~CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE) == 0;
    if (!known_order || !known_flags) {
      if (failure_index) *failure_index = attribute_starts[index];
      return api::fail(function, CUDA_ERROR_INVALID_VALUE,
                       known_order ? "unknown copy flags" : "unknown source access order");
    }
  }
  for (size_t index = 0; index < count; ++index)
    if (sizes[index] && (!destinations[index] || !sources[index])) {
      if (failure_index) *failure_index = index;
      return api::fail(function, CUDA_ERROR_INVALID_VALUE,
                       fmt::format("copy {} has a null pointer", index));
    }
  size_t attribute = 0;
  for (size_t index = 0; index < count; ++index) {
    if (attribute + 1 < attribute_count && attribute_starts[attribute + 1] == index) ++attribute;
    // A source read "during the call" may be gone once the call returns: that copy is waited
    // for. The other orders read in stream order, which both allow.
    bool wait = attributes[attribute].srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    if (CUresult status = copy(function, as_pointer(destinations[index]),
                               as_pointer(sources[index]), sizes[index], stream, per_thread, wait);
        status != CUDA_SUCCESS) {
      if (failure_index) *failure_index = index;
      return status;
    }
  }
  return CUDA_SUCCESS;
}

}  // namespace

XCUDA_EXPORT CUresult cuMemcpyBatchAsync(CUdeviceptr* destinations, CUdeviceptr* sources,
                                         size_t* sizes, size_t count,
                                         CUmemcpyAttributes* attributes, size_t* attribute_starts,
                                         size_t attribute_count, size_t* failure_index,
                                         CUstream stream) {
  return copy_batch(__func__, destinations, sources, sizes, count, attributes, attribute_starts,
                    attribute_count, failure_index, stream, false);
}
XCUDA_EXPORT CUresult cuMemcpyBatchAsync_ptsz(CUdeviceptr* destinations, CUdeviceptr* sources,
                                              size_t* sizes, size_t count,
                                              CUmemcpyAttributes* attributes,
                                              size_t* attribute_starts, size_t attribute_count,
                                              size_t* failure_index, CUstream stream) {
  return copy_batch(__func__, destinations, sources, sizes, count, attributes, attribute_starts,
                    attribute_count, failure_index, stream, true);
}
XCUDA_EXPORT CUresult cuMemcpyBatchAsync_v2(CUdeviceptr* destinations, CUdeviceptr* sources,
                                            size_t* sizes, size_t count,
                                            CUmemcpyAttributes* attributes,
                                            size_t* attribute_starts, size_t attribute_count,
                                            CUstream stream) {
  return copy_batch(__func__, destinations, sources, sizes, count, attributes, attribute_starts,
                    attribute_count, nullptr, stream, false);
}
XCUDA_EXPORT CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr* destinations, CUdeviceptr* sources,
                                                 size_t* sizes, size_t count,
                                                 CUmemcpyAttributes* attributes,
                                                 size_t* attribute_starts, size_t attribute_count,
                                                 CUstream stream) {
  return copy_batch(__func__, destinations, sources, sizes, count, attributes, attribute_starts,
                    attribute_count, nullptr, stream, true);
}
