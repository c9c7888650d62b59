// Contexts: primary contexts, created contexts, the per-thread current-context stack.
#include "src/api.h"

#include <optional>

#include "runtime/backend.h"
#include "runtime/event.h"
#include "src/peer_access.h"

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
  if (least) *least = runtime::least_stream_priority;
  if (greatest) *greatest = runtime::greatest_stream_priority;
  return CUDA_SUCCESS;
}

namespace {

// What a context reports for a limit nobody set: the documented defaults of NVIDIA's driver.
std::optional<size_t> default_limit(CUlimit limit) {
  switch (limit) {
    case CU_LIMIT_STACK_SIZE: return runtime::default_stack_bytes;
    case CU_LIMIT_PRINTF_FIFO_SIZE: return size_t{1} << 20;
    case CU_LIMIT_MALLOC_HEAP_SIZE: return size_t{8} << 20;
    case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH: return 2;
    case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: return 2048;
    case CU_LIMIT_MAX_L2_FETCH_GRANULARITY: return 64;
    case CU_LIMIT_PERSISTING_L2_CACHE_SIZE: return 0;
    default: return std::nullopt;  // shared-memory and CIG limits belong to CIG contexts
  }
}

}  // namespace

XCUDA_EXPORT CUresult cuCtxGetLimit(size_t* value, CUlimit limit) {
  XCUDA_REQUIRE(value, CUDA_ERROR_INVALID_VALUE, "value output pointer is null");
  CUresult result;
  Context* context = api::current_context(__func__, result);
  if (!context) return result;
  std::optional<size_t> fallback = default_limit(limit);
  XCUDA_REQUIRE(fallback, CUDA_ERROR_UNSUPPORTED_LIMIT,
                fmt::format("limit {} is not supported", static_cast<int>(limit)));
  *value = context->limit(limit).value_or(*fallback);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value) {
  CUresult result;
  Context* context = api::current_context(__func__, result);
  if (!context) return result;
  XCUDA_REQUIRE(default_limit(limit), CUDA_ERROR_UNSUPPORTED_LIMIT,
                fmt::format("limit {} is not supported", static_cast<int>(limit)));
  // The documented range of the L2 fetch granularity; the driver rounds within it.
  XCUDA_REQUIRE(limit != CU_LIMIT_MAX_L2_FETCH_GRANULARITY || value <= 128,
                CUDA_ERROR_INVALID_VALUE, "L2 fetch granularity above 128 bytes");
  // Host threads have deep stacks and unbounded printf buffers: the values are kept and
  // reported back, which is all a program can observe of them.
  context->set_limit(limit, value);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxGetCacheConfig(CUfunc_cache* config) {
  XCUDA_REQUIRE(config, CUDA_ERROR_INVALID_VALUE, "config output pointer is null");
  CUresult result;
  if (!api::current_context(__func__, result)) return result;
  *config = CU_FUNC_CACHE_PREFER_NONE;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxSetCacheConfig(CUfunc_cache config) {
  XCUDA_REQUIRE(config <= CU_FUNC_CACHE_PREFER_EQUAL, CUDA_ERROR_INVALID_VALUE,
                "unknown cache configuration");
  CUresult result;
  if (!api::current_context(__func__, result)) return result;
  return CUDA_SUCCESS;
}

// Bank size has not been configurable since Kepler: the setting is accepted and has no effect,
// and every context reports four-byte banks, as NVIDIA's driver does on such devices.
XCUDA_EXPORT CUresult cuCtxGetSharedMemConfig(CUsharedconfig* config) {
  XCUDA_REQUIRE(config, CUDA_ERROR_INVALID_VALUE, "config output pointer is null");
  CUresult result;
  if (!api::current_context(__func__, result)) return result;
  *config = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxSetSharedMemConfig(CUsharedconfig config) {
  XCUDA_REQUIRE(config <= CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE, CUDA_ERROR_INVALID_VALUE,
                "unknown shared memory configuration");
  CUresult result;
  if (!api::current_context(__func__, result)) return result;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxGetId(CUcontext handle, unsigned long long* id) {
  XCUDA_REQUIRE(id, CUDA_ERROR_INVALID_VALUE, "id output pointer is null");
  Context* context = nullptr;
  if (handle) {
    XCUDA_REQUIRE(runtime::live_contexts().contains(handle), CUDA_ERROR_INVALID_CONTEXT,
                  "not a live context");
    context = as_context(handle);
  } else {
    CUresult result;
    context = api::current_context(__func__, result);
    if (!context) return result;
  }
  *id = context->id();
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxSetFlags(unsigned int flags) {
  XCUDA_REQUIRE((flags & ~known_context_flags) == 0, CUDA_ERROR_INVALID_VALUE, "unknown flags");
  CUresult result;
  Context* context = api::current_context(__func__, result);
  if (!context) return result;
  context->set_flags(flags);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxResetPersistingL2Cache() {
  // The host device keeps no persisting lines: there is nothing to reset.
  CUresult result;
  if (!api::current_context(__func__, result)) return result;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxGetExecAffinity(CUexecAffinityParam* affinity, CUexecAffinityType type) {
  XCUDA_REQUIRE(affinity, CUDA_ERROR_INVALID_VALUE, "affinity output pointer is null");
  XCUDA_REQUIRE(type == CU_EXEC_AFFINITY_TYPE_SM_COUNT, CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY,
                fmt::format("execution affinity type {} is not supported", static_cast<int>(type)));
  CUresult result;
  Context* context = api::current_context(__func__, result);
  if (!context) return result;
  // A context created without affinity may use every multiprocessor of its device.
  affinity->type = type;
  affinity->param.smCount.val = static_cast<unsigned>(
      runtime::backend().properties(context->device()).multiprocessor_count);
  return CUDA_SUCCESS;
}

namespace {

// The context and event of cuCtxRecordEvent/cuCtxWaitEvent, checked as the driver does.
CUresult context_and_event(const char* function, CUcontext context_handle, CUevent event_handle,
                           runtime::Event*& event) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  XCUDA_REQUIRE(runtime::live_contexts().contains(context_handle), CUDA_ERROR_INVALID_CONTEXT,
                "not a live context");
  XCUDA_REQUIRE(runtime::live_events().contains(event_handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live event");
  event = reinterpret_cast<runtime::Event*>(event_handle);
  XCUDA_REQUIRE(&event->context() == as_context(context_handle), CUDA_ERROR_INVALID_HANDLE,
                "the event belongs to another context");
  if (auto fault = event->context().fault()) return api::fail(function, *fault);
  return CUDA_SUCCESS;
}

}  // namespace

XCUDA_EXPORT CUresult cuCtxRecordEvent(CUcontext context, CUevent handle) {
  runtime::Event* event = nullptr;
  if (CUresult status = context_and_event(__func__, context, handle, event); status != CUDA_SUCCESS)
    return status;
  event->record_context();
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxWaitEvent(CUcontext context, CUevent handle) {
  runtime::Event* event = nullptr;
  if (CUresult status = context_and_event(__func__, context, handle, event); status != CUDA_SUCCESS)
    return status;
  event->make_context_wait();
  return CUDA_SUCCESS;
}

namespace {

// The current context and the peer context of cuCtxEnablePeerAccess/cuCtxDisablePeerAccess.
CUresult current_and_peer(const char* function, CUcontext peer_handle, Context*& current,
                          Context*& peer) {
  CUresult result;
  current = api::current_context(function, result);
  if (!current) return result;
  XCUDA_REQUIRE(runtime::live_contexts().contains(peer_handle), CUDA_ERROR_INVALID_CONTEXT,
                "the peer is not a live context");
  peer = as_context(peer_handle);
  return CUDA_SUCCESS;
}

}  // namespace

XCUDA_EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer_handle, unsigned int flags) {
  XCUDA_REQUIRE(flags == 0, CUDA_ERROR_INVALID_VALUE, "flags must be 0");
  Context* current = nullptr;
  Context* peer = nullptr;
  if (CUresult status = current_and_peer(__func__, peer_handle, current, peer);
      status != CUDA_SUCCESS)
    return status;
  XCUDA_REQUIRE(api::can_access_peer(current->device(), peer->device()),
                CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
                fmt::format("device {} cannot access the memory of device {}", current->device(),
                            peer->device()));
  XCUDA_REQUIRE(current->enable_peer_access(peer->id()), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
                "peer access to this context is already enabled");
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuCtxDisablePeerAccess(CUcontext peer_handle) {
  Context* current = nullptr;
  Context* peer = nullptr;
  if (CUresult status = current_and_peer(__func__, peer_handle, current, peer);
      status != CUDA_SUCCESS)
    return status;
  XCUDA_REQUIRE(current->disable_peer_access(peer->id()), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED,
                "peer access to this context is not enabled");
  return CUDA_SUCCESS;
}

// Profiler control. No profiling tool attaches to xcuda, so there is nothing to start or stop;
// the calls still require a current context, as NVIDIA's do.
// cuProfilerInitialize is deprecated: since CUDA 12.0 it always answers NOT_SUPPORTED.
XCUDA_EXPORT CUresult cuProfilerInitialize(const char*, const char*, int) {
  return CUDA_ERROR_NOT_SUPPORTED;
}

XCUDA_EXPORT CUresult cuProfilerStart() {
  CUresult status;
  return api::current_context(__func__, status) ? CUDA_SUCCESS : status;
}

XCUDA_EXPORT CUresult cuProfilerStop() {
  CUresult status;
  return api::current_context(__func__, status) ? CUDA_SUCCESS : status;
}
