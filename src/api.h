// What every Driver API family file shares: our ABI header, the export attribute, and the one
// place where runtime errors become CUresult codes.
#pragma once

// Lets an implementation define both cuMemAlloc and cuMemAlloc_v2 without the header's
// name-mapping macros getting in the way.
#define XCUDA_EXPORTED_NAMES_ONLY
#include "xcuda/cuda.h"

#include "runtime/context.h"
#include "runtime/module.h"
#include "runtime/log.h"
#include "runtime/status.h"

#include <string>

#define XCUDA_EXPORT extern "C" __attribute__((visibility("default")))

namespace xcuda::api {

CUresult to_result(ErrorCode code);

// Logs `what` under the entry point's name and returns its CUresult.
CUresult fail(const char* function, const Error& error);
CUresult fail(const char* function, CUresult code, std::string_view message);

// cuInit has succeeded in this process.
bool initialized();
void mark_initialized();

// The calling thread's context, or nullptr after reporting why there is none. A context with
// a sticky fault reports the fault through `result`.
runtime::Context* current_context(const char* function, CUresult& result);

// A stream handle as the application passes it: 0 is the legacy default stream (or the
// per-thread one in the _ptsz/_ptds entry points), CU_STREAM_LEGACY and CU_STREAM_PER_THREAD
// name those explicitly. nullptr after reporting an invalid handle through `result`.
runtime::Stream* resolve_stream(const char* function, CUstream handle, bool per_thread_default,
                                CUresult& result);

// A CUfunction, or a CUkernel passed where a CUfunction is expected (CUDA 12 allows it),
// as the function in the calling thread's context.
CUresult resolve_function(const char* function, CUfunction handle, runtime::Function*& result);

// The whole file at `path`, with a NUL appended so PTX text in it is a safe C string.
CUresult read_image_file(const char* function, const char* path, std::string& contents);

}  // namespace xcuda::api

// Argument checks shared by every entry point: report and return on the first failure.
#define XCUDA_REQUIRE(condition, code, message)                       \
  do {                                                                \
    if (!(condition)) return ::xcuda::api::fail(__func__, code, message); \
  } while (0)

#define XCUDA_CHECK_STATUS(expression)                                         \
  do {                                                                         \
    if (auto status_ = (expression); !status_) return ::xcuda::api::fail(__func__, status_.error()); \
  } while (0)
