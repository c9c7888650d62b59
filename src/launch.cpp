// Kernel launches and function attributes.
#include <cstring>
#include <vector>

#include "src/api.h"
#include "src/graph.h"
#include "src/launch.h"
#include "src/occupancy.h"

#include "runtime/backend.h"
#include "runtime/module.h"

using namespace xcuda;
using runtime::Function;

namespace {

Function* as_function(CUfunction handle) { return reinterpret_cast<Function*>(handle); }

// The kernel's .param buffer, from either form cuLaunchKernel accepts: an array of pointers to
// each argument, or `extra` holding one packed buffer.
CUresult pack_parameters(const char* function, const ptx::KernelInfo& kernel, void** arguments,
                         void** extra, std::vector<uint8_t>& buffer) {
  buffer.assign(kernel.parameter_buffer_size, 0);
  XCUDA_REQUIRE(!(arguments && extra), CUDA_ERROR_INVALID_VALUE,
                "both kernelParams and extra are given");
  if (arguments) {
    for (size_t index = 0; index < kernel.parameters.size(); ++index) {
      const ptx::ParameterInfo& parameter = kernel.parameters[index];
      XCUDA_REQUIRE(arguments[index], CUDA_ERROR_INVALID_VALUE,
                    fmt::format("kernelParams[{}] of '{}' is null", index, kernel.name));
      std::memcpy(buffer.data() + parameter.offset, arguments[index], parameter.size);
    }
    return CUDA_SUCCESS;
  }
  if (extra) {
    const void* packed = nullptr;
    size_t packed_size = 0;
    for (size_t index = 0; extra[index] != CU_LAUNCH_PARAM_END; index += 2) {
      if (extra[index] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
        packed = extra[index + 1];
      } else if (extra[index] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
        XCUDA_REQUIRE(extra[index + 1], CUDA_ERROR_INVALID_VALUE, "buffer size pointer is null");
        packed_size = *static_cast<const size_t*>(extra[index + 1]);
      } else {
        return api::fail(function, CUDA_ERROR_INVALID_VALUE, "unknown key in extra");
      }
    }
    XCUDA_REQUIRE(packed || packed_size == 0, CUDA_ERROR_INVALID_VALUE,
                  "extra gives a size but no buffer");
    XCUDA_REQUIRE(packed_size >= kernel.parameter_buffer_size || kernel.parameters.empty(),
                  CUDA_ERROR_INVALID_VALUE,
                  fmt::format("extra buffer holds {} bytes, '{}' takes {}", packed_size,
                              kernel.name, kernel.parameter_buffer_size));
    if (packed) std::memcpy(buffer.data(), packed, kernel.parameter_buffer_size);
    return CUDA_SUCCESS;
  }
  XCUDA_REQUIRE(kernel.parameters.empty(), CUDA_ERROR_INVALID_VALUE,
                fmt::format("'{}' takes {} parameters but none were given", kernel.name,
                            kernel.parameters.size()));
  return CUDA_SUCCESS;
}

// A cooperative grid's blocks must all be resident at once, or a grid-wide barrier never opens.
CUresult check_cooperative(const char* function_name, const Function& function,
                           const runtime::DeviceProperties& device,
                           const runtime::LaunchShape& shape) {
  XCUDA_REQUIRE(device.cooperative_launch, CUDA_ERROR_NOT_SUPPORTED,
                "the device does not support cooperative launches");
  uint64_t threads = uint64_t{shape.block[0]} * shape.block[1] * shape.block[2];
  uint64_t blocks = uint64_t{shape.grid[0]} * shape.grid[1] * shape.grid[2];
  uint64_t resident = uint64_t(api::max_active_blocks_per_multiprocessor(
                          function, device, threads, shape.dynamic_shared_bytes)) *
                      uint64_t(device.multiprocessor_count);
  XCUDA_REQUIRE(blocks <= resident, CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
                fmt::format("cooperative launch of '{}' with {} blocks; at most {} are resident "
                            "at once",
                            function.info().name, blocks, resident));
  return CUDA_SUCCESS;
}

}  // namespace

CUresult api::prepare_launch(const char* function_name, Function& function,
                             runtime::LaunchShape& shape, void** arguments, void** extra,
                             bool cooperative, std::vector<uint8_t>& parameters) {
  const ptx::KernelInfo& kernel = function.info();
  const runtime::DeviceProperties& device =
      runtime::backend().properties(function.module().context().device());

  uint64_t threads = uint64_t{shape.block[0]} * shape.block[1] * shape.block[2];
  uint32_t thread_limit = kernel.max_threads_per_block ? kernel.max_threads_per_block
                                                       : device.max_threads_per_block;
  for (int axis = 0; axis < 3; ++axis) {
    XCUDA_REQUIRE(shape.grid[axis] >= 1 && shape.grid[axis] <= uint32_t(device.max_grid_dim[axis]),
                  CUDA_ERROR_INVALID_VALUE,
                  fmt::format("grid dimension {} is {}", "xyz"[axis], shape.grid[axis]));
    XCUDA_REQUIRE(
        shape.block[axis] >= 1 && shape.block[axis] <= uint32_t(device.max_block_dim[axis]),
        CUDA_ERROR_INVALID_VALUE,
        fmt::format("block dimension {} is {}", "xyz"[axis], shape.block[axis]));
  }
  XCUDA_REQUIRE(threads <= thread_limit, CUDA_ERROR_INVALID_VALUE,
                fmt::format("{} threads per block; '{}' allows at most {}", threads, kernel.name,
                            thread_limit));
  XCUDA_REQUIRE(shape.dynamic_shared_bytes <= function.max_dynamic_shared_bytes,
                CUDA_ERROR_INVALID_VALUE,
                fmt::format("{} bytes of dynamic shared memory; '{}' allows {}",
                            shape.dynamic_shared_bytes, kernel.name,
                            function.max_dynamic_shared_bytes));

  shape.stack_bytes =
      function.module().context().limit(CU_LIMIT_STACK_SIZE).value_or(runtime::default_stack_bytes);

  if (cooperative)
    if (CUresult checked = check_cooperative(function_name, function, device, shape);
        checked != CUDA_SUCCESS)
      return checked;

  return pack_parameters(function_name, kernel, arguments, extra, parameters);
}

namespace {

CUresult launch(const char* function_name, CUfunction handle, runtime::LaunchShape shape,
                CUstream stream_handle, void** arguments, void** extra, bool per_thread) {
  Function* resolved = nullptr;
  if (CUresult status = api::resolve_function(function_name, handle, resolved);
      status != CUDA_SUCCESS)
    return status;
  CUresult status;
  runtime::Stream* stream = api::resolve_stream(function_name, stream_handle, per_thread, status);
  if (!stream) return status;
  Function& function = *resolved;
  std::vector<uint8_t> parameters;
  if (CUresult prepared = api::prepare_launch(function_name, function, shape, arguments, extra,
                                              shape.cooperative, parameters);
      prepared != CUDA_SUCCESS)
    return prepared;
  // Compiles on first launch (and on the first of blocks not whole warps wide).
  Expected<runtime::LoadedKernel*> loaded = function.kernel(shape.block[0]);
  if (!loaded) return api::fail(function_name, loaded.error());
  bool captured = false;
  if (CUresult capture = api::capture_launch(function_name, *stream, handle, function, **loaded,
                                             shape, parameters, captured);
      capture != CUDA_SUCCESS || captured)
    return capture;
  stream->order_for_new_work().launch(**loaded, shape, std::move(parameters));
  return CUDA_SUCCESS;
}

runtime::LaunchShape make_shape(unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
                                unsigned block_y, unsigned block_z, unsigned shared_bytes,
                                bool cooperative = false) {
  runtime::LaunchShape shape;
  shape.grid[0] = grid_x;
  shape.grid[1] = grid_y;
  shape.grid[2] = grid_z;
  shape.block[0] = block_x;
  shape.block[1] = block_y;
  shape.block[2] = block_z;
  shape.dynamic_shared_bytes = shared_bytes;
  shape.cooperative = cooperative;
  return shape;
}

CUresult launch_with_config(const char* function_name, const CUlaunchConfig* config,
                            CUfunction handle, void** arguments, void** extra, bool per_thread) {
  XCUDA_REQUIRE(config, CUDA_ERROR_INVALID_VALUE, "config is null");
  XCUDA_REQUIRE(config->numAttrs == 0 || config->attrs, CUDA_ERROR_INVALID_VALUE,
                "attributes are null");
  bool cooperative = false;
  for (unsigned index = 0; index < config->numAttrs; ++index) {
    const CUlaunchAttribute& attribute = config->attrs[index];
    switch (attribute.id) {
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        cooperative = attribute.value.cooperative != 0;
        break;
      case CU_LAUNCH_ATTRIBUTE_IGNORE:
      case CU_LAUNCH_ATTRIBUTE_PRIORITY:
      case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
      case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
        break;
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: {
        const auto& cluster = attribute.value.clusterDim;
        XCUDA_REQUIRE(cluster.x * cluster.y * cluster.z <= 1, CUDA_ERROR_NOT_SUPPORTED,
                      "thread-block clusters are not supported yet");
        break;
      }
      default:
        return api::fail(function_name, CUDA_ERROR_NOT_SUPPORTED,
                         fmt::format("launch attribute {} is not supported yet",
                                     static_cast<int>(attribute.id)));
    }
  }
  return launch(function_name, handle,
                make_shape(config->gridDimX, config->gridDimY, config->gridDimZ,
                           config->blockDimX, config->blockDimY, config->blockDimZ,
                           config->sharedMemBytes, cooperative),
                config->hStream, arguments, extra, per_thread);
}

}  // namespace

XCUDA_EXPORT CUresult cuLaunchKernel(CUfunction function, unsigned int grid_x, unsigned int grid_y,
                                     unsigned int grid_z, unsigned int block_x,
                                     unsigned int block_y, unsigned int block_z,
                                     unsigned int shared_bytes, CUstream stream, void** arguments,
                                     void** extra) {
  return launch(__func__, function,
                make_shape(grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes),
                stream, arguments, extra, false);
}

XCUDA_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction function, unsigned int grid_x,
                                          unsigned int grid_y, unsigned int grid_z,
                                          unsigned int block_x, unsigned int block_y,
                                          unsigned int block_z, unsigned int shared_bytes,
                                          CUstream stream, void** arguments, void** extra) {
  return launch(__func__, function,
                make_shape(grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes),
                stream, arguments, extra, true);
}

XCUDA_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction function, unsigned int grid_x,
                                                unsigned int grid_y, unsigned int grid_z,
                                                unsigned int block_x, unsigned int block_y,
                                                unsigned int block_z, unsigned int shared_bytes,
                                                CUstream stream, void** arguments) {
  return launch(__func__, function,
                make_shape(grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes, true),
                stream, arguments, nullptr, false);
}

XCUDA_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction function, unsigned int grid_x,
                                                     unsigned int grid_y, unsigned int grid_z,
                                                     unsigned int block_x, unsigned int block_y,
                                                     unsigned int block_z,
                                                     unsigned int shared_bytes, CUstream stream,
                                                     void** arguments) {
  return launch(__func__, function,
                make_shape(grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes, true),
                stream, arguments, nullptr, true);
}

XCUDA_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction function,
                                       void** arguments, void** extra) {
  return launch_with_config(__func__, config, function, arguments, extra, false);
}

XCUDA_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction function,
                                            void** arguments, void** extra) {
  return launch_with_config(__func__, config, function, arguments, extra, true);
}

XCUDA_EXPORT CUresult cuFuncGetAttribute(int* value, CUfunction_attribute attribute,
                                         CUfunction handle) {
  XCUDA_REQUIRE(value, CUDA_ERROR_INVALID_VALUE, "value output pointer is null");
  Function* resolved = nullptr;
  if (CUresult status = api::resolve_function(__func__, handle, resolved); status != CUDA_SUCCESS)
    return status;
  Function& function = *resolved;
  const ptx::KernelInfo& kernel = function.info();
  const runtime::DeviceProperties& device =
      runtime::backend().properties(function.module().context().device());
  int architecture = device.compute_major * 10 + device.compute_minor;
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *value = kernel.max_threads_per_block ? int(kernel.max_threads_per_block)
                                            : device.max_threads_per_block;
      break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = int(kernel.static_shared_bytes); break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *value = 0; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *value = int(kernel.local_bytes_per_thread); break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = 32; break;  // no register file; a typical count
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *value = architecture; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *value = architecture; break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *value = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      *value = int(function.max_dynamic_shared_bytes);
      break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *value = -1; break;
    // No PTX kernel xcuda compiles requires clusters (.reqnctapercluster is not supported),
    // and the scheduling preference is the default one.
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: *value = 0; break;
    default:
      return api::fail(__func__, CUDA_ERROR_INVALID_VALUE,
                       fmt::format("function attribute {} is not known",
                                   static_cast<int>(attribute)));
  }
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuFuncSetAttribute(CUfunction handle, CUfunction_attribute attribute,
                                         int value) {
  Function* resolved = nullptr;
  if (CUresult status = api::resolve_function(__func__, handle, resolved); status != CUDA_SUCCESS)
    return status;
  Function& function = *resolved;
  const runtime::DeviceProperties& device =
      runtime::backend().properties(function.module().context().device());
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      XCUDA_REQUIRE(value >= 0 && uint64_t(value) + function.info().static_shared_bytes <=
                                      uint64_t(device.shared_memory_per_block_optin),
                    CUDA_ERROR_INVALID_VALUE, "more shared memory than a block may have");
      function.max_dynamic_shared_bytes = uint32_t(value);
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      XCUDA_REQUIRE(value >= -1 && value <= 100, CUDA_ERROR_INVALID_VALUE,
                    "carveout must be -1 or a percentage");
      return CUDA_SUCCESS;
    default:
      return api::fail(__func__, CUDA_ERROR_INVALID_VALUE, "attribute cannot be set");
  }
}

XCUDA_EXPORT CUresult cuFuncSetCacheConfig(CUfunction handle, CUfunc_cache config) {
  Function* function = nullptr;
  if (CUresult status = api::resolve_function(__func__, handle, function); status != CUDA_SUCCESS)
    return status;
  XCUDA_REQUIRE(config <= CU_FUNC_CACHE_PREFER_EQUAL, CUDA_ERROR_INVALID_VALUE,
                "unknown cache configuration");
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuFuncGetName(const char** name, CUfunction handle) {
  XCUDA_REQUIRE(name, CUDA_ERROR_INVALID_VALUE, "name output pointer is null");
  XCUDA_REQUIRE(runtime::live_functions().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live function");
  *name = as_function(handle)->info().name.c_str();
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuFuncGetModule(CUmodule* module, CUfunction handle) {
  XCUDA_REQUIRE(module, CUDA_ERROR_INVALID_VALUE, "module output pointer is null");
  XCUDA_REQUIRE(runtime::live_functions().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live function");
  *module = reinterpret_cast<CUmodule>(&as_function(handle)->module());
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuFuncGetParamInfo(CUfunction handle, size_t index, size_t* offset,
                                         size_t* size) {
  Function* function = nullptr;
  if (CUresult status = api::resolve_function(__func__, handle, function); status != CUDA_SUCCESS)
    return status;
  const auto& parameters = function->info().parameters;
  XCUDA_REQUIRE(index < parameters.size(), CUDA_ERROR_INVALID_VALUE, "no such parameter");
  if (offset) *offset = parameters[index].offset;
  if (size) *size = parameters[index].size;
  return CUDA_SUCCESS;
}

// Lazy loading: a kernel is compiled on its first launch, or here.
XCUDA_EXPORT CUresult cuFuncLoad(CUfunction handle) {
  Function* function = nullptr;
  if (CUresult status = api::resolve_function(__func__, handle, function); status != CUDA_SUCCESS)
    return status;
  XCUDA_CHECK_STATUS(function->kernel());
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuFuncIsLoaded(CUfunctionLoadingState* state, CUfunction handle) {
  XCUDA_REQUIRE(state, CUDA_ERROR_INVALID_VALUE, "state output pointer is null");
  Function* function = nullptr;
  if (CUresult status = api::resolve_function(__func__, handle, function); status != CUDA_SUCCESS)
    return status;
  *state = function->loaded() ? CU_FUNCTION_LOADING_STATE_LOADED
                              : CU_FUNCTION_LOADING_STATE_UNLOADED;
  return CUDA_SUCCESS;
}
