// What the memory family's files (memory.cpp, memory_copy.cpp, memory_pool.cpp,
// memory_attributes.cpp) share: pointer conversion, range checks against the live
// allocations, and queueing work on a stream.
#pragma once

#include <functional>

#include "src/api.h"

#include "runtime/memory.h"

namespace xcuda::api {

inline void* as_pointer(CUdeviceptr address) { return reinterpret_cast<void*>(address); }

// A device-side range must lie inside one live allocation; `which` names it in the log.
CUresult check_device_range(const char* function, CUdeviceptr address, size_t bytes,
                            const char* which);

// Resolves the stream, lets `enqueue` put work on it, and waits for it when `synchronous`.
CUresult submit(const char* function, CUstream handle, bool per_thread, bool synchronous,
                const std::function<void(runtime::Queue&)>& enqueue);

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
