// How a failed HIP call becomes one of our errors: the closest CUDA meaning for the code, and a
// message naming the call and HIP's own name for the error, for the log.
#pragma once

#include <string_view>

#include "runtime/hip/hip_library.h"
#include "runtime/status.h"

namespace xcuda::runtime::hip {

ErrorCode translate_hip_error(int error);

// `call` is what failed, e.g. "hipMalloc of 4096 bytes".
Error hip_error(const HipFunctions& functions, int error, std::string_view call);

// Success for hip_success, else hip_error(...).
Status check_hip(const HipFunctions& functions, int error, std::string_view call);

}  // namespace xcuda::runtime::hip
