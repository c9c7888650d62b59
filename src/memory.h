// What the memory family's files (memory.cpp, memory_copy.cpp, memory_pool.cpp,
// memory_attributes.cpp) share: pointer conversion, range checks against the live
// allocations, and queueing work on a stream.
#pragma once

#include <functional>

#include "src/api.h"

#include "runtime/graph.h"
#include "runtime/memory.h"
#include "runtime/strided_copy.h"

namespace xcuda::api {

inline void* as_pointer(CUdeviceptr address) { return reinterpret_cast<void*>(address); }

// A device-side range must lie inside one live allocation; `which` names it in the log.
CUresult check_device_range(const char* function, CUdeviceptr address, size_t bytes,
                            const char* which);

// Resolves the stream, lets `enqueue` put work on it, and waits for it when `synchronous`.
// On a capturing stream the work becomes a graph node of `kind` instead, so `enqueue` must
// hold copies of what it needs.
CUresult submit(const char* function, CUstream handle, bool per_thread, bool synchronous,
                runtime::NodeKind kind, const std::function<void(runtime::Queue&)>& enqueue);

// The checks of cuMemcpy3D and cuMemsetD2D*, for graph nodes that run them later: the
// copy or fill ready to enqueue.
CUresult prepare_copy_3d(const char* function, const CUDA_MEMCPY3D& copy,
                         runtime::StridedCopy& result);
CUresult prepare_fill_2d(const char* function, CUdeviceptr destination, size_t pitch,
                         uint32_t pattern, uint32_t pattern_bytes, size_t width, size_t height,
                         runtime::StridedFill& result);

// Gives memory back to where it came from: its pool, or the backend.
Status release_memory(const runtime::Allocation& allocation);

}  // namespace xcuda::api

// XCUDA_REQUIRE and XCUDA_CHECK_STATUS for helpers: they report under the entry point's name,
// which the helper receives as `function`, rather than under the helper's own.
#define XCUDA_MEMORY_REQUIRE(condition, code, message)                    \
  do {                                                                    \
    if (!(condition)) return ::xcuda::api::fail(function, code, message); \
  } while (0)

#define XCUDA_MEMORY_CHECK_STATUS(expression)               \
  do {                                                      \
    if (auto status_ = (expression); !status_)              \
      return ::xcuda::api::fail(function, status_.error()); \
  } while (0)
