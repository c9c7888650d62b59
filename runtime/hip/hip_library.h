// The few HIP runtime entry points the HIP backend calls, declared by us from the public HIP API
// documentation and resolved with dlopen, so that libcuda.so.1 loads on machines without ROCm.
// Handles are opaque pointers and enums plain ints: only their values cross this boundary.
// Tests fill a HipFunctions with fakes instead of loading the library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/status.h"

namespace xcuda::runtime::hip {

// hipError_t values, identical in ROCm 5, 6 and 7.
enum HipError : int {
  hip_success = 0,
  hip_error_invalid_value = 1,
  hip_error_out_of_memory = 2,
  hip_error_not_initialized = 3,
  hip_error_invalid_device_function = 98,
  hip_error_no_device = 100,
  hip_error_invalid_device = 101,
  hip_error_invalid_image = 200,
  hip_error_invalid_context = 201,
  hip_error_no_binary_for_gpu = 209,
  hip_error_invalid_kernel_file = 218,
  hip_error_invalid_handle = 400,
  hip_error_not_found = 500,
  hip_error_not_ready = 600,
  hip_error_illegal_address = 700,
  hip_error_launch_out_of_resources = 701,
  hip_error_assert = 710,
  hip_error_launch_failure = 719,
  hip_error_cooperative_launch_too_large = 720,
  hip_error_not_supported = 801,
};

// hipMemcpyDefault: the runtime tells host from device memory by address, as CUDA's UVA does.
constexpr int hip_memcpy_default = 4;
constexpr unsigned hip_stream_non_blocking = 1;
constexpr unsigned hip_event_disable_timing = 2;

// The `extra` argument of hipModuleLaunchKernel: tagged pointers, ending with the end tag.
inline void* const hip_launch_parameter_buffer_pointer = reinterpret_cast<void*>(1);
inline void* const hip_launch_parameter_buffer_size = reinterpret_cast<void*>(2);
inline void* const hip_launch_parameter_end = reinterpret_cast<void*>(3);

using HipStream = void*;
using HipEvent = void*;
using HipModule = void*;
using HipFunction = void*;

struct HipFunctions {
  // Which library answered, e.g. "libamdhip64.so.6"; "" for fakes.
  std::string library;

  int (*init)(unsigned flags) = nullptr;
  int (*get_device_count)(int* count) = nullptr;
  int (*runtime_get_version)(int* version) = nullptr;
  const char* (*get_error_name)(int error) = nullptr;
  int (*set_device)(int device) = nullptr;

  int (*device_get_attribute)(int* value, int attribute, int device) = nullptr;
  int (*device_get_name)(char* name, int length, int device) = nullptr;
  int (*device_total_mem)(size_t* bytes, int device) = nullptr;
  int (*device_get_uuid)(uint8_t* uuid, int device) = nullptr;  // hipUUID: 16 bytes
  // hipGetDeviceProperties in whichever struct layout this library speaks; only the
  // architecture name is read from it, at `architecture_name_offset`.
  int (*get_device_properties)(void* properties, int device) = nullptr;
  size_t architecture_name_offset = 0;

  int (*malloc)(void** pointer, size_t bytes) = nullptr;
  int (*free)(void* pointer) = nullptr;
  // Synchronous with the host, for memory set up before any stream uses it.
  int (*memcpy)(void* destination, const void* source, size_t bytes, int kind) = nullptr;
  int (*memset)(void* destination, int value, size_t bytes) = nullptr;
  int (*memcpy_async)(void* destination, const void* source, size_t bytes, int kind,
                      HipStream stream) = nullptr;
  int (*memset_d8_async)(void* destination, unsigned char value, size_t count,
                         HipStream stream) = nullptr;
  int (*memset_d16_async)(void* destination, unsigned short value, size_t count,
                          HipStream stream) = nullptr;
  int (*memset_d32_async)(void* destination, int value, size_t count, HipStream stream) = nullptr;
  int (*memcpy_2d_async)(void* destination, size_t destination_pitch, const void* source,
                         size_t source_pitch, size_t width, size_t height, int kind,
                         HipStream stream) = nullptr;

  int (*stream_create_with_flags)(HipStream* stream, unsigned flags) = nullptr;
  int (*stream_destroy)(HipStream stream) = nullptr;
  int (*stream_synchronize)(HipStream stream) = nullptr;
  int (*stream_query)(HipStream stream) = nullptr;
  int (*stream_wait_event)(HipStream stream, HipEvent event, unsigned flags) = nullptr;
  int (*event_create_with_flags)(HipEvent* event, unsigned flags) = nullptr;
  int (*event_record)(HipEvent event, HipStream stream) = nullptr;
  int (*event_destroy)(HipEvent event) = nullptr;
  // hipLaunchHostFunc is newer than ROCm 5.2 (Debian 12's), which has only hipStreamAddCallback, so
  // either may be null, never both.
  int (*launch_host_func)(HipStream stream, void (*function)(void*), void* user_data) = nullptr;
  int (*stream_add_callback)(HipStream stream, void (*callback)(HipStream, int, void*),
                             void* user_data, unsigned flags) = nullptr;

  int (*module_load_data)(HipModule* module, const void* image) = nullptr;
  int (*module_unload)(HipModule module) = nullptr;
  int (*module_get_function)(HipFunction* function, HipModule module, const char* name) = nullptr;
  int (*module_get_global)(void** address, size_t* bytes, HipModule module,
                           const char* name) = nullptr;
  int (*module_launch_kernel)(HipFunction function, unsigned grid_x, unsigned grid_y,
                              unsigned grid_z, unsigned block_x, unsigned block_y, unsigned block_z,
                              unsigned shared_bytes, HipStream stream, void** parameters,
                              void** extra) = nullptr;
  // Newer than ROCm 5.2 (Debian 12's), so null where the runtime lacks it. Takes no `extra`:
  // `parameters` points at each kernel argument in turn.
  int (*module_launch_cooperative_kernel)(HipFunction function, unsigned grid_x, unsigned grid_y,
                                          unsigned grid_z, unsigned block_x, unsigned block_y,
                                          unsigned block_z, unsigned shared_bytes, HipStream stream,
                                          void** parameters) = nullptr;
  int (*module_occupancy_max_active_blocks_per_multiprocessor)(
      int* blocks, HipFunction function, int block_size, size_t dynamic_shared_bytes) = nullptr;
};

// Loads libamdhip64.so.7, .so.6 or .so.5, the first that opens, and resolves every function;
// not_found when none opens or one lacks a function we need (optional ones stay null). The
// library stays loaded for the life of the process.
Expected<HipFunctions> load_hip_library();

}  // namespace xcuda::runtime::hip
