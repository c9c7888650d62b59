// cuGetErrorName and cuGetErrorString. Both answer before cuInit, as the real driver's do, because
// applications call them while reporting that cuInit itself failed.
#include <algorithm>
#include <array>

#include "src/api.h"

namespace {

struct ErrorDescription {
  CUresult code;
  const char* name;
  const char* text;
};

// The name comes from the enumerator itself so the two cannot drift apart.
#define XCUDA_ERROR(code, text) ErrorDescription{code, #code, text}

// Every CUresult of CUDA 13.0, sorted by code for the binary search below.
constexpr std::array kErrors = {
    XCUDA_ERROR(CUDA_SUCCESS, "no error"),
    XCUDA_ERROR(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    XCUDA_ERROR(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    XCUDA_ERROR(CUDA_ERROR_NOT_INITIALIZED, "driver not initialized (cuInit has not been called)"),
    XCUDA_ERROR(CUDA_ERROR_DEINITIALIZED, "driver is shutting down"),
    XCUDA_ERROR(CUDA_ERROR_PROFILER_DISABLED, "profiler is disabled for this run"),
    XCUDA_ERROR(CUDA_ERROR_PROFILER_NOT_INITIALIZED, "profiler not initialized"),
    XCUDA_ERROR(CUDA_ERROR_PROFILER_ALREADY_STARTED, "profiler already started"),
    XCUDA_ERROR(CUDA_ERROR_PROFILER_ALREADY_STOPPED, "profiler already stopped"),
    XCUDA_ERROR(CUDA_ERROR_STUB_LIBRARY, "a stub driver library was loaded instead of a real one"),
    XCUDA_ERROR(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "the call needs a newer driver"),
    XCUDA_ERROR(CUDA_ERROR_DEVICE_UNAVAILABLE, "device is busy or unavailable"),
    XCUDA_ERROR(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device found"),
    XCUDA_ERROR(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
    XCUDA_ERROR(CUDA_ERROR_DEVICE_NOT_LICENSED, "device lacks the license this feature needs"),
    XCUDA_ERROR(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
    XCUDA_ERROR(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
    XCUDA_ERROR(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context is already current"),
    XCUDA_ERROR(CUDA_ERROR_MAP_FAILED, "mapping failed"),
    XCUDA_ERROR(CUDA_ERROR_UNMAP_FAILED, "unmapping failed"),
    XCUDA_ERROR(CUDA_ERROR_ARRAY_IS_MAPPED, "array is mapped and cannot be destroyed"),
    XCUDA_ERROR(CUDA_ERROR_ALREADY_MAPPED, "resource is already mapped"),
    XCUDA_ERROR(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"),
    XCUDA_ERROR(CUDA_ERROR_ALREADY_ACQUIRED, "resource is already acquired"),
    XCUDA_ERROR(CUDA_ERROR_NOT_MAPPED, "resource is not mapped"),
    XCUDA_ERROR(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, "mapped resource is not an array"),
    XCUDA_ERROR(CUDA_ERROR_NOT_MAPPED_AS_POINTER, "mapped resource is not a pointer"),
    XCUDA_ERROR(CUDA_ERROR_ECC_UNCORRECTABLE, "uncorrectable ECC error"),
    XCUDA_ERROR(CUDA_ERROR_UNSUPPORTED_LIMIT, "limit not supported on this device"),
    XCUDA_ERROR(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "context is already in use by another thread"),
    XCUDA_ERROR(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
                "peer access is not supported between these devices"),
    XCUDA_ERROR(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"),
    XCUDA_ERROR(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, "invalid graphics interop context"),
    XCUDA_ERROR(CUDA_ERROR_NVLINK_UNCORRECTABLE, "uncorrectable NVLink error"),
    XCUDA_ERROR(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "PTX JIT compiler not found"),
    XCUDA_ERROR(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "PTX version not supported by this driver"),
    XCUDA_ERROR(CUDA_ERROR_JIT_COMPILATION_DISABLED, "PTX JIT compilation is disabled"),
    XCUDA_ERROR(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, "execution affinity type not supported"),
    XCUDA_ERROR(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC,
                "device-side synchronization is not supported here"),
    XCUDA_ERROR(CUDA_ERROR_CONTAINED, "a contained device error occurred"),
    XCUDA_ERROR(CUDA_ERROR_INVALID_SOURCE, "invalid source"),
    XCUDA_ERROR(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
    XCUDA_ERROR(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "shared object symbol not found"),
    XCUDA_ERROR(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "shared object initialization failed"),
    XCUDA_ERROR(CUDA_ERROR_OPERATING_SYSTEM, "an operating system call failed"),
    XCUDA_ERROR(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
    XCUDA_ERROR(CUDA_ERROR_ILLEGAL_STATE, "operation not allowed in the current state"),
    XCUDA_ERROR(CUDA_ERROR_LOSSY_QUERY, "the answer cannot be represented without loss"),
    XCUDA_ERROR(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    XCUDA_ERROR(CUDA_ERROR_NOT_READY, "device not ready"),
    XCUDA_ERROR(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
    XCUDA_ERROR(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"),
    XCUDA_ERROR(CUDA_ERROR_LAUNCH_TIMEOUT, "kernel ran past the execution time limit"),
    XCUDA_ERROR(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING,
                "launch uses incompatible texturing modes"),
    XCUDA_ERROR(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access is already enabled"),
    XCUDA_ERROR(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access has not been enabled"),
    XCUDA_ERROR(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "primary context is already active"),
    XCUDA_ERROR(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context has been destroyed"),
    XCUDA_ERROR(CUDA_ERROR_ASSERT, "device-side assert triggered"),
    XCUDA_ERROR(CUDA_ERROR_TOO_MANY_PEERS, "too many peer devices"),
    XCUDA_ERROR(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "host memory is already registered"),
    XCUDA_ERROR(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "host memory is not registered"),
    XCUDA_ERROR(CUDA_ERROR_HARDWARE_STACK_ERROR, "device call stack overflowed or was corrupted"),
    XCUDA_ERROR(CUDA_ERROR_ILLEGAL_INSTRUCTION, "an illegal instruction was encountered"),
    XCUDA_ERROR(CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address"),
    XCUDA_ERROR(CUDA_ERROR_INVALID_ADDRESS_SPACE, "operation used the wrong address space"),
    XCUDA_ERROR(CUDA_ERROR_INVALID_PC, "invalid program counter"),
    XCUDA_ERROR(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
    XCUDA_ERROR(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "cooperative launch grid is too large"),
    XCUDA_ERROR(CUDA_ERROR_TENSOR_MEMORY_LEAK, "kernel exited without freeing its tensor memory"),
    XCUDA_ERROR(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
    XCUDA_ERROR(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
    XCUDA_ERROR(CUDA_ERROR_SYSTEM_NOT_READY, "system is not ready for CUDA"),
    XCUDA_ERROR(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "driver and kernel module versions differ"),
    XCUDA_ERROR(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
                "forward compatibility not supported on this device"),
    XCUDA_ERROR(CUDA_ERROR_MPS_CONNECTION_FAILED, "could not connect to the MPS server"),
    XCUDA_ERROR(CUDA_ERROR_MPS_RPC_FAILURE, "call to the MPS server failed"),
    XCUDA_ERROR(CUDA_ERROR_MPS_SERVER_NOT_READY, "MPS server is not ready"),
    XCUDA_ERROR(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, "MPS client limit reached"),
    XCUDA_ERROR(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, "MPS connection limit reached"),
    XCUDA_ERROR(CUDA_ERROR_MPS_CLIENT_TERMINATED, "MPS client was terminated"),
    XCUDA_ERROR(CUDA_ERROR_CDP_NOT_SUPPORTED, "dynamic parallelism is not supported here"),
    XCUDA_ERROR(CUDA_ERROR_CDP_VERSION_MISMATCH, "dynamic parallelism versions do not match"),
    XCUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                "operation not allowed while a stream is capturing"),
    XCUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                "stream capture was invalidated by an earlier error"),
    XCUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_MERGE, "operation would merge two separate captures"),
    XCUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "capture was not started in this stream"),
    XCUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_UNJOINED,
                "capture forked a stream that never joined back"),
    XCUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "operation would cross a capture boundary"),
    XCUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
                "operation would wait on the legacy stream during capture"),
    XCUDA_ERROR(CUDA_ERROR_CAPTURED_EVENT,
                "operation not allowed on an event recorded during capture"),
    XCUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
                "capture must be ended by the thread that began it"),
    XCUDA_ERROR(CUDA_ERROR_TIMEOUT, "wait timed out"),
    XCUDA_ERROR(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
                "graph update not allowed by its constraints"),
    XCUDA_ERROR(CUDA_ERROR_EXTERNAL_DEVICE, "an external device signalled an error"),
    XCUDA_ERROR(CUDA_ERROR_INVALID_CLUSTER_SIZE, "invalid cluster size"),
    XCUDA_ERROR(CUDA_ERROR_FUNCTION_NOT_LOADED, "function not loaded"),
    XCUDA_ERROR(CUDA_ERROR_INVALID_RESOURCE_TYPE, "invalid resource type"),
    XCUDA_ERROR(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "invalid resource configuration"),
    XCUDA_ERROR(CUDA_ERROR_KEY_ROTATION, "encryption key rotation failed"),
    XCUDA_ERROR(CUDA_ERROR_UNKNOWN, "unknown error"),
};

#undef XCUDA_ERROR

static_assert(std::is_sorted(kErrors.begin(), kErrors.end(),
                             [](const ErrorDescription& left, const ErrorDescription& right) {
                               return left.code < right.code;
                             }),
              "kErrors must stay sorted by code");

const ErrorDescription* find_error(CUresult code) {
  auto found = std::lower_bound(
      kErrors.begin(), kErrors.end(), code,
      [](const ErrorDescription& entry, CUresult wanted) { return entry.code < wanted; });
  return found != kErrors.end() && found->code == code ? &*found : nullptr;
}

// Both entry points answer alike; they differ only in the column they read.
CUresult look_up(const char* function, CUresult error, const char** out,
                 const char* ErrorDescription::*column) {
  if (out == nullptr) return xcuda::api::fail(function, CUDA_ERROR_INVALID_VALUE, "pStr is null");
  const ErrorDescription* found = find_error(error);
  if (found == nullptr) {
    *out = nullptr;
    return xcuda::api::fail(function, CUDA_ERROR_INVALID_VALUE,
                            fmt::format("{} is not a CUresult", static_cast<int>(error)));
  }
  *out = found->*column;
  return CUDA_SUCCESS;
}

}  // namespace

XCUDA_EXPORT CUresult cuGetErrorName(CUresult error, const char** pStr) {
  return look_up(__func__, error, pStr, &ErrorDescription::name);
}

XCUDA_EXPORT CUresult cuGetErrorString(CUresult error, const char** pStr) {
  return look_up(__func__, error, pStr, &ErrorDescription::text);
}
