#include "src/api.h"

#include <atomic>
#include <fstream>
#include <iterator>

#include "runtime/context.h"

namespace xcuda::api {

namespace {
std::atomic<bool> initialized_flag{false};
}  // namespace

void mark_initialized() { initialized_flag.store(true, std::memory_order_release); }
bool initialized() { return initialized_flag.load(std::memory_order_acquire); }

CUresult to_result(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_value: return CUDA_ERROR_INVALID_VALUE;
    case ErrorCode::invalid_image: return CUDA_ERROR_INVALID_IMAGE;
    case ErrorCode::invalid_ptx: return CUDA_ERROR_INVALID_PTX;
    case ErrorCode::no_binary_for_gpu: return CUDA_ERROR_NO_BINARY_FOR_GPU;
    case ErrorCode::invalid_source: return CUDA_ERROR_INVALID_SOURCE;
    case ErrorCode::not_found: return CUDA_ERROR_NOT_FOUND;
    case ErrorCode::out_of_memory: return CUDA_ERROR_OUT_OF_MEMORY;
    case ErrorCode::not_supported: return CUDA_ERROR_NOT_SUPPORTED;
    case ErrorCode::invalid_handle: return CUDA_ERROR_INVALID_HANDLE;
    case ErrorCode::invalid_context: return CUDA_ERROR_INVALID_CONTEXT;
    case ErrorCode::not_initialized: return CUDA_ERROR_NOT_INITIALIZED;
    case ErrorCode::illegal_address: return CUDA_ERROR_ILLEGAL_ADDRESS;
    case ErrorCode::misaligned_address: return CUDA_ERROR_MISALIGNED_ADDRESS;
    case ErrorCode::illegal_instruction: return CUDA_ERROR_ILLEGAL_INSTRUCTION;
    case ErrorCode::launch_failed: return CUDA_ERROR_LAUNCH_FAILED;
    case ErrorCode::launch_out_of_resources: return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    case ErrorCode::cooperative_launch_too_large: return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
    case ErrorCode::not_ready: return CUDA_ERROR_NOT_READY;
    case ErrorCode::assertion_failed: return CUDA_ERROR_ASSERT;
    case ErrorCode::illegal_state: return CUDA_ERROR_ILLEGAL_STATE;
    case ErrorCode::stream_capture_unsupported: return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    case ErrorCode::stream_capture_invalidated: return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    case ErrorCode::stream_capture_unmatched: return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    case ErrorCode::stream_capture_unjoined: return CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
    case ErrorCode::stream_capture_isolation: return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    case ErrorCode::stream_capture_implicit: return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    case ErrorCode::stream_capture_wrong_thread: return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    case ErrorCode::graph_exec_update_failure: return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    case ErrorCode::unknown: return CUDA_ERROR_UNKNOWN;
  }
  return CUDA_ERROR_UNKNOWN;
}

CUresult fail(const char* function, CUresult code, std::string_view message) {
  // Misuse is the application's business: report it at debug level unless the code says the
  // device or the image is broken, which a user needs to see when they turn logging on.
  auto level = (code == CUDA_ERROR_INVALID_VALUE || code == CUDA_ERROR_NOT_FOUND ||
                code == CUDA_ERROR_NOT_READY)
                   ? spdlog::level::debug
                   : spdlog::level::warn;
  runtime::logger().log(level, "{}: {} (error {})", function, message, static_cast<int>(code));
  return code;
}

CUresult fail(const char* function, const Error& error) {
  return fail(function, to_result(error.code), error.message);
}

runtime::Context* current_context(const char* function, CUresult& result) {
  if (!initialized()) {
    result = fail(function, CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
    return nullptr;
  }
  runtime::Context* context = runtime::current_context();
  if (!context) {
    result = fail(function, CUDA_ERROR_INVALID_CONTEXT, "no context is current on this thread");
    return nullptr;
  }
  if (auto fault = context->fault()) {
    result = fail(function, *fault);
    return nullptr;
  }
  result = CUDA_SUCCESS;
  return context;
}

runtime::Stream* resolve_stream(const char* function, CUstream handle, bool per_thread_default,
                                CUresult& result) {
  runtime::Context* context = current_context(function, result);
  if (!context) return nullptr;
  if (handle == CU_STREAM_PER_THREAD || (handle == nullptr && per_thread_default))
    return &context->per_thread_stream();
  if (handle == nullptr || handle == CU_STREAM_LEGACY) return &context->legacy_stream();
  if (!runtime::live_streams().contains(handle)) {
    result = fail(function, CUDA_ERROR_INVALID_HANDLE, "not a live stream");
    return nullptr;
  }
  return reinterpret_cast<runtime::Stream*>(handle);
}

CUresult read_image_file(const char* function, const char* path, std::string& contents) {
  if (!path) return fail(function, CUDA_ERROR_INVALID_VALUE, "path is null");
  std::ifstream file(path, std::ios::binary);
  if (!file) return fail(function, CUDA_ERROR_FILE_NOT_FOUND, std::string("cannot open ") + path);
  contents.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  contents.push_back('\0');
  return CUDA_SUCCESS;
}

}  // namespace xcuda::api
