// Contexts: primary contexts, created contexts, the per-thread current-context stack.
#include "src/api.h"

#include "runtime/backend.h"

using namespace xcuda;
using runtime::Context;

namespace {

CUresult check_device(const char* function, CUdevice device) {
  if (!api::initialized())
    return api::fail(function, CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  if (device < 0 || device >= runtime::backend().device_count())
    return api::fail(function, CUDA_ERROR_INVALID_DEVICE,
                     "device " + std::to_string(device) + " does not exist");
  return CUDA_SUCCESS;
}

Context* as_context(CUcontext handle) { return reinterpret_cast<Context*>(handle); }
CUcontext as_handle(Context* context) { return reinterpret_cast<CUcontext>(context); }

constexpr unsigned known_context_flags = CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST |
                                         CU_CTX_LMEM_RESIZE_TO_MAX | CU_CTX_COREDUMP_ENABLE |
                                         CU_CTX_USER_COREDUMP_ENABLE | CU_CTX_SYNC_MEMOPS;

CUresult create_context(const char* function, CUcontext* result, unsigned flags, CUdevice device) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "context output pointer is null");
  if (CUresult status = check_device(function, device); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE((flags & ~known_context_flags) == 0, CUDA_ERROR_INVALID_VALUE, "unknown flags");
  auto* context = new Context(device, flags);
  runtime::push_current_context(context);
  *result = as_handle(context);
  return CUDA_SUCCESS;
}

}  // namespace

XCUDA_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* result, CUdevice device) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "context output pointer is null");
  if (CUresult status = check_device(__func__, device); status != CUDA_SUCCESS) return status;
  *result = as_handle(&runtime::retain_primary_context(device));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  if (CUresult status = check_device(__func__, device); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE(runtime::release_primary_context(device), CUDA_ERROR_INVALID_CONTEXT,
                "the primary context is not retained");
  return CUDA_SUCCESS;
}

// The pre-11.0 names; cudart 13.0 still asks for cuDevicePrimaryCtxRelease at version 7000.
XCUDA_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice device) {
  return cuDevicePrimaryCtxRelease_v2(device);
}

XCUDA_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice device, unsigned int flags) {
  return cuDevicePrimaryCtxSetFlags_v2(device, flags);
}

XCUDA_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice device) {
  return cuDevicePrimaryCtxReset_v2(device);
}

XCUDA_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice device, unsigned int flags) {
  if (CUresult status = check_device(__func__, device); status != CUDA_SUCCESS) return status;
  XCUDA_REQUIRE((flags & ~known_context_flags) == 0, CUDA_ERROR_INVALID_VALUE, "unknown flags");
  XCUDA_CHECK_STATUS(runtime::set_primary_context_flags(device, flags));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice device, unsigned int* flags,
                                                 int* active) {
  XCUDA_REQUIRE(flags && active, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  if (CUresult status = check_device(__func__, device); status != CUDA_SUCCESS) return status;
  *flags = runtime::primary_context_flags(device);
  *active = runtime::primary_context_if_active(device) != nullptr;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice device) {
  if (CUresult status = check_device(__func__, device); status != CUDA_SUCCESS) return status;
  XCUDA_CHECK_STATUS(runtime::reset_primary_context(device));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxCreate_v2(CUcontext* result, unsigned int flags, CUdevice device) {
  return create_context(__func__, result, flags, device);
}

XCUDA_EXPORT CUresult cuCtxCreate_v3(CUcontext* result, CUexecAffinityParam* parameters,
                                     int parameter_count, unsigned int flags, CUdevice device) {
  XCUDA_REQUIRE(parameter_count == 0 || parameters, CUDA_ERROR_INVALID_VALUE,
                "affinity parameters are null");
  XCUDA_REQUIRE(parameter_count == 0, CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY,
                "execution affinity is not supported by the host device");
  return create_context(__func__, result, flags, device);
}

XCUDA_EXPORT CUresult cuCtxCreate_v4(CUcontext* result, CUctxCreateParams* parameters,
                                     unsigned int flags, CUdevice device) {
  XCUDA_REQUIRE(!parameters || (parameters->execAffinityParams == nullptr &&
                                parameters->cigParams == nullptr),
                CUDA_ERROR_NOT_SUPPORTED, "execution affinity and CIG are not supported");
  return create_context(__func__, result, flags, device);
}

XCUDA_EXPORT CUresult cuCtxDestroy_v2(CUcontext handle) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  XCUDA_REQUIRE(runtime::live_contexts().contains(handle), CUDA_ERROR_INVALID_CONTEXT,
                "not a live context");
  Context* context = as_context(handle);
  XCUDA_REQUIRE(runtime::primary_context_if_active(context->device()) != context,
                CUDA_ERROR_INVALID_CONTEXT, "a primary context is released, not destroyed");
  delete context;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext handle) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  XCUDA_REQUIRE(runtime::live_contexts().contains(handle), CUDA_ERROR_INVALID_CONTEXT,
                "not a live context");
  runtime::push_current_context(as_context(handle));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext* result) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  Context* popped = runtime::pop_current_context();
  XCUDA_REQUIRE(popped, CUDA_ERROR_INVALID_CONTEXT, "no context is current on this thread");
  if (result) *result = as_handle(popped);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxSetCurrent(CUcontext handle) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  XCUDA_REQUIRE(!handle || runtime::live_contexts().contains(handle), CUDA_ERROR_INVALID_CONTEXT,
                "not a live context");
  runtime::set_current_context(as_context(handle));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxGetCurrent(CUcontext* result) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "context output pointer is null");
  *result = as_handle(runtime::current_context());
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxGetDevice(CUdevice* device) {
  XCUDA_REQUIRE(device, CUDA_ERROR_INVALID_VALUE, "device output pointer is null");
  CUresult result;
  Context* context = api::current_context(__func__, result);
  if (!context) return result;
  *device = context->device();
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxGetDevice_v2(CUdevice* device, CUcontext handle) {
  if (!handle) return cuCtxGetDevice(device);
  XCUDA_REQUIRE(device, CUDA_ERROR_INVALID_VALUE, "device output pointer is null");
  XCUDA_REQUIRE(runtime::live_contexts().contains(handle), CUDA_ERROR_INVALID_CONTEXT,
                "not a live context");
  *device = as_context(handle)->device();
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxGetFlags(unsigned int* flags) {
  XCUDA_REQUIRE(flags, CUDA_ERROR_INVALID_VALUE, "flags output pointer is null");
  CUresult result;
  Context* context = api::current_context(__func__, result);
  if (!context) return result;
  *flags = context->flags();
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxSynchronize() {
  CUresult result;
  Context* context = api::current_context(__func__, result);
  if (!context) return result;
  XCUDA_CHECK_STATUS(context->synchronize());
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxSynchronize_v2(CUcontext handle) {
  if (!handle) return cuCtxSynchronize();
  XCUDA_REQUIRE(runtime::live_contexts().contains(handle), CUDA_ERROR_INVALID_CONTEXT,
                "not a live context");
  XCUDA_CHECK_STATUS(as_context(handle)->synchronize());
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxGetApiVersion(CUcontext handle, unsigned int* version) {
  XCUDA_REQUIRE(version, CUDA_ERROR_INVALID_VALUE, "version output pointer is null");
  XCUDA_REQUIRE(!handle || runtime::live_contexts().contains(handle), CUDA_ERROR_INVALID_CONTEXT,
                "not a live context");
  // The context API has been stable since CUDA 3.2, which is the version real drivers report.
  *version = 3020;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxGetStreamPriorityRange(int* least, int* greatest) {
  CUresult result;
  if (!api::current_context(__func__, result)) return result;
  // The same range as NVIDIA GPUs report; the host backend runs all priorities alike.
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxGetLimit(size_t* value, CUlimit limit) {
  XCUDA_REQUIRE(value, CUDA_ERROR_INVALID_VALUE, "value output pointer is null");
  CUresult result;
  if (!api::current_context(__func__, result)) return result;
  switch (limit) {
    case CU_LIMIT_STACK_SIZE: *value = 1024; break;
    case CU_LIMIT_PRINTF_FIFO_SIZE: *value = 1 << 20; break;
    case CU_LIMIT_MALLOC_HEAP_SIZE: *value = 8 << 20; break;
    case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH: *value = 2; break;
    case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: *value = 2048; break;
    case CU_LIMIT_MAX_L2_FETCH_GRANULARITY: *value = 64; break;
    case CU_LIMIT_PERSISTING_L2_CACHE_SIZE: *value = 0; break;
    default: return api::fail(__func__, CUDA_ERROR_UNSUPPORTED_LIMIT, "unknown limit");
  }
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value) {
  CUresult result;
  if (!api::current_context(__func__, result)) return result;
  // Host threads have deep stacks and unbounded printf buffers: accepting any value is honest.
  XCUDA_REQUIRE(limit <= CU_LIMIT_PERSISTING_L2_CACHE_SIZE, CUDA_ERROR_UNSUPPORTED_LIMIT,
                "unknown limit");
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxGetCacheConfig(CUfunc_cache* config) {
  XCUDA_REQUIRE(config, CUDA_ERROR_INVALID_VALUE, "config output pointer is null");
  *config = CU_FUNC_CACHE_PREFER_NONE;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxSetCacheConfig(CUfunc_cache config) {
  XCUDA_REQUIRE(config <= CU_FUNC_CACHE_PREFER_EQUAL, CUDA_ERROR_INVALID_VALUE,
                "unknown cache configuration");
  return CUDA_SUCCESS;
}
