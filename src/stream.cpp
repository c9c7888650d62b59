// Streams: creation, ordering between streams, synchronisation, host callbacks.
#include "src/api.h"

#include "runtime/event.h"

using namespace xcuda;
using runtime::Context;
using runtime::Stream;

namespace {

CUresult create_stream(const char* function, CUstream* result, unsigned flags, int priority) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "stream output pointer is null");
  XCUDA_REQUIRE((flags & ~CU_STREAM_NON_BLOCKING) == 0, CUDA_ERROR_INVALID_VALUE,
                "unknown flags");
  CUresult status;
  Context* context = api::current_context(function, status);
  if (!context) return status;
  auto stream = context->create_stream((flags & CU_STREAM_NON_BLOCKING) == 0, priority);
  if (!stream) return api::fail(function, stream.error());
  *result = reinterpret_cast<CUstream>(*stream);
  return CUDA_SUCCESS;
}

CUresult synchronize(const char* function, CUstream handle, bool per_thread) {
  CUresult status;
  Stream* stream = api::resolve_stream(function, handle, per_thread, status);
  if (!stream) return status;
  Status finished = stream->queue().synchronize();
  if (!finished) {
    stream->context().record_fault(finished.error());
    return api::fail(function, finished.error());
  }
  return CUDA_SUCCESS;
}

CUresult query(const char* function, CUstream handle, bool per_thread) {
  CUresult status;
  Stream* stream = api::resolve_stream(function, handle, per_thread, status);
  if (!stream) return status;
  return stream->queue().idle() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult wait_event(const char* function, CUstream handle, CUevent event_handle, unsigned flags,
                    bool per_thread) {
  XCUDA_REQUIRE(runtime::live_events().contains(event_handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live event");
  XCUDA_REQUIRE((flags & ~CU_EVENT_WAIT_EXTERNAL) == 0, CUDA_ERROR_INVALID_VALUE, "unknown flags");
  CUresult status;
  Stream* stream = api::resolve_stream(function, handle, per_thread, status);
  if (!stream) return status;
  reinterpret_cast<runtime::Event*>(event_handle)->make_stream_wait(*stream);
  return CUDA_SUCCESS;
}

// cuStreamAddCallback's callback also receives the stream and its status.
struct StreamCallback {
  CUstreamCallback callback;
  CUstream stream;
  void* user_data;
};

void run_stream_callback(void* data) {
  auto* call = static_cast<StreamCallback*>(data);
  call->callback(call->stream, CUDA_SUCCESS, call->user_data);
  delete call;
}

CUresult add_callback(const char* function, CUstream handle, CUstreamCallback callback,
                      void* user_data, unsigned flags, bool per_thread) {
  XCUDA_REQUIRE(callback, CUDA_ERROR_INVALID_VALUE, "callback is null");
  XCUDA_REQUIRE(flags == 0, CUDA_ERROR_INVALID_VALUE, "flags must be 0");
  CUresult status;
  Stream* stream = api::resolve_stream(function, handle, per_thread, status);
  if (!stream) return status;
  stream->order_for_new_work().host_function(run_stream_callback,
                                             new StreamCallback{callback, handle, user_data});
  return CUDA_SUCCESS;
}

CUresult launch_host_function(const char* function, CUstream handle, CUhostFn host_function,
                              void* user_data, bool per_thread) {
  XCUDA_REQUIRE(host_function, CUDA_ERROR_INVALID_VALUE, "function is null");
  CUresult status;
  Stream* stream = api::resolve_stream(function, handle, per_thread, status);
  if (!stream) return status;
  stream->order_for_new_work().host_function(host_function, user_data);
  return CUDA_SUCCESS;
}

}  // namespace

XCUDA_EXPORT CUresult cuStreamCreate(CUstream* result, unsigned int flags) {
  return create_stream(__func__, result, flags, 0);
}

XCUDA_EXPORT CUresult cuStreamCreateWithPriority(CUstream* result, unsigned int flags,
                                                 int priority) {
  return create_stream(__func__, result, flags, priority);
}

XCUDA_EXPORT CUresult cuStreamDestroy_v2(CUstream handle) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  XCUDA_REQUIRE(handle != CU_STREAM_LEGACY && handle != CU_STREAM_PER_THREAD && handle,
                CUDA_ERROR_INVALID_HANDLE, "default streams cannot be destroyed");
  XCUDA_REQUIRE(runtime::live_streams().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live stream");
  Stream* stream = reinterpret_cast<Stream*>(handle);
  XCUDA_CHECK_STATUS(stream->context().destroy_stream(stream));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  return synchronize(__func__, stream, false);
}
XCUDA_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream stream) {
  return synchronize(__func__, stream, true);
}
XCUDA_EXPORT CUresult cuStreamQuery(CUstream stream) { return query(__func__, stream, false); }
XCUDA_EXPORT CUresult cuStreamQuery_ptsz(CUstream stream) { return query(__func__, stream, true); }

XCUDA_EXPORT CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  return wait_event(__func__, stream, event, flags, false);
}
XCUDA_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream stream, CUevent event, unsigned int flags) {
  return wait_event(__func__, stream, event, flags, true);
}

XCUDA_EXPORT CUresult cuStreamAddCallback(CUstream stream, CUstreamCallback callback,
                                          void* user_data, unsigned int flags) {
  return add_callback(__func__, stream, callback, user_data, flags, false);
}
XCUDA_EXPORT CUresult cuStreamAddCallback_ptsz(CUstream stream, CUstreamCallback callback,
                                               void* user_data, unsigned int flags) {
  return add_callback(__func__, stream, callback, user_data, flags, true);
}

XCUDA_EXPORT CUresult cuLaunchHostFunc(CUstream stream, CUhostFn function, void* user_data) {
  return launch_host_function(__func__, stream, function, user_data, false);
}
XCUDA_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream stream, CUhostFn function, void* user_data) {
  return launch_host_function(__func__, stream, function, user_data, true);
}

XCUDA_EXPORT CUresult cuStreamGetFlags(CUstream handle, unsigned int* flags) {
  XCUDA_REQUIRE(flags, CUDA_ERROR_INVALID_VALUE, "flags output pointer is null");
  CUresult status;
  Stream* stream = api::resolve_stream(__func__, handle, false, status);
  if (!stream) return status;
  *flags = stream->blocking() ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuStreamGetPriority(CUstream handle, int* priority) {
  XCUDA_REQUIRE(priority, CUDA_ERROR_INVALID_VALUE, "priority output pointer is null");
  CUresult status;
  Stream* stream = api::resolve_stream(__func__, handle, false, status);
  if (!stream) return status;
  *priority = stream->priority();
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuStreamGetCtx(CUstream handle, CUcontext* context) {
  XCUDA_REQUIRE(context, CUDA_ERROR_INVALID_VALUE, "context output pointer is null");
  CUresult status;
  Stream* stream = api::resolve_stream(__func__, handle, false, status);
  if (!stream) return status;
  *context = reinterpret_cast<CUcontext>(&stream->context());
  return CUDA_SUCCESS;
}
