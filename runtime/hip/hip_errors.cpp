#include "runtime/hip/hip_errors.h"

#include <string>

namespace xcuda::runtime::hip {

ErrorCode translate_hip_error(int error) {
  switch (error) {
    case hip_error_invalid_value: return ErrorCode::invalid_value;
    case hip_error_out_of_memory: return ErrorCode::out_of_memory;
    case hip_error_not_initialized: return ErrorCode::not_initialized;
    // CUDA's invalid device ordinal has no code of ours; it is a bad argument all the same.
    case hip_error_invalid_device: return ErrorCode::invalid_value;
    case hip_error_invalid_device_function: return ErrorCode::not_found;
    case hip_error_invalid_image:
    case hip_error_invalid_kernel_file: return ErrorCode::invalid_image;
    case hip_error_invalid_context: return ErrorCode::invalid_context;
    case hip_error_no_binary_for_gpu: return ErrorCode::no_binary_for_gpu;
    case hip_error_invalid_handle: return ErrorCode::invalid_handle;
    case hip_error_not_found: return ErrorCode::not_found;
    case hip_error_not_ready: return ErrorCode::not_ready;
    case hip_error_illegal_address: return ErrorCode::illegal_address;
    case hip_error_launch_out_of_resources: return ErrorCode::launch_out_of_resources;
    case hip_error_cooperative_launch_too_large: return ErrorCode::cooperative_launch_too_large;
    case hip_error_assert: return ErrorCode::assertion_failed;
    case hip_error_launch_failure: return ErrorCode::launch_failed;
    case hip_error_not_supported: return ErrorCode::not_supported;
    default: return ErrorCode::unknown;
  }
}

Error hip_error(const HipFunctions& functions, int error, std::string_view call) {
  const char* name = functions.get_error_name ? functions.get_error_name(error) : nullptr;
  std::string description = name ? name : "hipError " + std::to_string(error);
  return make_error(translate_hip_error(error), std::string(call) + " failed: " + description +
                                                    " (" + std::to_string(error) + ")");
}

Status check_hip(const HipFunctions& functions, int error, std::string_view call) {
  if (error == hip_success) return {};
  return hip_error(functions, error, call);
}

}  // namespace xcuda::runtime::hip
