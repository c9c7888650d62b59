#include "runtime/hip/hip_library.h"

#include <dlfcn.h>

#include <string_view>

namespace xcuda::runtime::hip {
namespace {

// Newest first: a machine with several ROCm installs gets the one its GPUs were set up for.
constexpr const char* library_names[] = {"libamdhip64.so.7", "libamdhip64.so.6",
                                         "libamdhip64.so.5"};

// Where gcnArchName (char[256]) sits in the two hipDeviceProp_t layouts: the one ROCm 6
// introduced (hipGetDevicePropertiesR0600) and the one before it (ROCm 5's
// hipGetDeviceProperties).
constexpr size_t architecture_name_offset_r0600 = 1160;
constexpr size_t architecture_name_offset_r0000 = 396;

class SymbolResolver {
 public:
  explicit SymbolResolver(void* library) : library_(library) {}

  template <class Function>
  void required(const char* name, Function& slot) {
    if (!optional(name, slot)) missing_ += std::string(missing_.empty() ? "" : ", ") + name;
  }

  template <class Function>
  bool optional(const char* name, Function& slot) {
    slot = reinterpret_cast<Function>(dlsym(library_, name));
    return slot != nullptr;
  }

  const std::string& missing() const { return missing_; }

 private:
  void* library_;
  std::string missing_;
};

// Every function the backend calls, or the names of those the library lacks.
Expected<HipFunctions> resolve(void* library, std::string_view library_name) {
  HipFunctions functions;
  functions.library = library_name;
  SymbolResolver resolver(library);
  resolver.required("hipInit", functions.init);
  resolver.required("hipGetDeviceCount", functions.get_device_count);
  resolver.required("hipRuntimeGetVersion", functions.runtime_get_version);
  resolver.required("hipGetErrorName", functions.get_error_name);
  resolver.required("hipSetDevice", functions.set_device);
  resolver.required("hipDeviceGetAttribute", functions.device_get_attribute);
  resolver.required("hipDeviceGetName", functions.device_get_name);
  resolver.required("hipDeviceTotalMem", functions.device_total_mem);
  resolver.required("hipDeviceGetUuid", functions.device_get_uuid);
  if (resolver.optional("hipGetDevicePropertiesR0600", functions.get_device_properties)) {
    functions.architecture_name_offset = architecture_name_offset_r0600;
  } else {
    resolver.required("hipGetDeviceProperties", functions.get_device_properties);
    functions.architecture_name_offset = architecture_name_offset_r0000;
  }
  resolver.required("hipMalloc", functions.malloc);
  resolver.required("hipFree", functions.free);
  resolver.required("hipMemcpy", functions.memcpy);
  resolver.required("hipMemset", functions.memset);
  resolver.required("hipMemcpyAsync", functions.memcpy_async);
  resolver.required("hipMemsetD8Async", functions.memset_d8_async);
  resolver.required("hipMemsetD16Async", functions.memset_d16_async);
  resolver.required("hipMemsetD32Async", functions.memset_d32_async);
  resolver.required("hipMemcpy2DAsync", functions.memcpy_2d_async);
  resolver.required("hipStreamCreateWithFlags", functions.stream_create_with_flags);
  resolver.required("hipStreamDestroy", functions.stream_destroy);
  resolver.required("hipStreamSynchronize", functions.stream_synchronize);
  resolver.required("hipStreamQuery", functions.stream_query);
  resolver.required("hipStreamWaitEvent", functions.stream_wait_event);
  resolver.required("hipEventCreateWithFlags", functions.event_create_with_flags);
  resolver.required("hipEventRecord", functions.event_record);
  resolver.required("hipEventDestroy", functions.event_destroy);
  if (!resolver.optional("hipLaunchHostFunc", functions.launch_host_func))
    resolver.required("hipStreamAddCallback", functions.stream_add_callback);
  resolver.required("hipModuleLoadData", functions.module_load_data);
  resolver.required("hipModuleUnload", functions.module_unload);
  resolver.required("hipModuleGetFunction", functions.module_get_function);
  resolver.required("hipModuleGetGlobal", functions.module_get_global);
  resolver.required("hipModuleLaunchKernel", functions.module_launch_kernel);
  (void)resolver.optional("hipModuleLaunchCooperativeKernel",
                          functions.module_launch_cooperative_kernel);
  resolver.required("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor",
                    functions.module_occupancy_max_active_blocks_per_multiprocessor);
  if (!resolver.missing().empty())
    return make_error(
        ErrorCode::not_found,
        std::string(library_name) + " lacks functions xcuda needs: " + resolver.missing());
  return functions;
}

}  // namespace

Expected<HipFunctions> load_hip_library() {
  std::string problems;
  for (const char* name : library_names) {
    // RTLD_LOCAL: HIP's own symbols must not interpose on the application's.
    void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      problems += std::string(problems.empty() ? "" : "; ") + dlerror();
      continue;
    }
    Expected<HipFunctions> functions = resolve(library, name);
    if (functions) return functions;
    problems += std::string(problems.empty() ? "" : "; ") + functions.error().message;
    dlclose(library);
  }
  return make_error(ErrorCode::not_found, "no usable HIP runtime: " + problems);
}

}  // namespace xcuda::runtime::hip
