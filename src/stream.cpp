// Streams: creation, ordering between streams, synchronisation, host callbacks.
#include "src/api.h"
#include "src/graph.h"

#include <algorithm>
#include <cstring>

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
  // As NVIDIA's driver does, a priority outside the range becomes the nearest one inside it.
  priority =
      std::clamp(priority, runtime::greatest_stream_priority, runtime::least_stream_priority);
  auto stream = context->create_stream((flags & CU_STREAM_NON_BLOCKING) == 0, priority);
  if (!stream) return api::fail(function, stream.error());
  *result = reinterpret_cast<CUstream>(*stream);
  return CUDA_SUCCESS;
}

CUresult synchronize(const char* function, CUstream handle, bool per_thread) {
  CUresult status;
  Stream* stream = api::resolve_stream(function, handle, per_thread, status);
  if (!stream) return status;
  if ((status = api::refuse_if_capturing(function, *stream)) != CUDA_SUCCESS) return status;
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
  if ((status = api::refuse_if_capturing(function, *stream)) != CUDA_SUCCESS) return status;
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
  const auto& event = *reinterpret_cast<runtime::Event*>(event_handle);
  // Inside a capture an external wait is a node of its own; any other wait is an edge of the
  // graph (a fork or a join).
  if (flags & CU_EVENT_WAIT_EXTERNAL) {
    bool captured = false;
    status = api::capture_work(
        function, *stream, runtime::NodeKind::event_wait,
        [event_handle](Stream& target) {
          if (runtime::live_events().contains(event_handle))
            reinterpret_cast<runtime::Event*>(event_handle)->make_stream_wait(target);
        },
        captured);
    if (status != CUDA_SUCCESS || captured) return status;
  }
  auto joined = runtime::capture_event_wait(event, *stream);
  if (!joined) return api::fail(function, joined.error());
  if (!*joined) event.make_stream_wait(*stream);
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
  if ((status = api::refuse_if_capturing(function, *stream)) != CUDA_SUCCESS) return status;
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
  bool captured = false;
  status = api::capture_work(
      function, *stream, runtime::NodeKind::host,
      [host_function, user_data](Stream& target) {
        target.queue().host_function(host_function, user_data);
      },
      captured);
  if (status != CUDA_SUCCESS || captured) return status;
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
  runtime::forget_stream(*stream);
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

namespace {

// Shared by each query and its _ptsz twin: resolves the stream, then answers from it.
template <class Answer>
CUresult with_stream(const char* function, CUstream handle, bool per_thread, Answer answer) {
  CUresult status;
  Stream* stream = api::resolve_stream(function, handle, per_thread, status);
  if (!stream) return status;
  return answer(*stream);
}

CUresult get_flags(const char* function, CUstream handle, unsigned* flags, bool per_thread) {
  XCUDA_REQUIRE(flags, CUDA_ERROR_INVALID_VALUE, "flags output pointer is null");
  return with_stream(function, handle, per_thread, [&](Stream& stream) {
    *flags = stream.blocking() ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING;
    return CUDA_SUCCESS;
  });
}

CUresult get_priority(const char* function, CUstream handle, int* priority, bool per_thread) {
  XCUDA_REQUIRE(priority, CUDA_ERROR_INVALID_VALUE, "priority output pointer is null");
  return with_stream(function, handle, per_thread, [&](Stream& stream) {
    *priority = stream.priority();
    return CUDA_SUCCESS;
  });
}

CUresult get_context(const char* function, CUstream handle, CUcontext* context,
                     CUgreenCtx* green_context, bool per_thread) {
  XCUDA_REQUIRE(context, CUDA_ERROR_INVALID_VALUE, "context output pointer is null");
  return with_stream(function, handle, per_thread, [&](Stream& stream) {
    *context = reinterpret_cast<CUcontext>(&stream.context());
    // xcuda creates no green contexts, so no stream belongs to one.
    if (green_context) *green_context = nullptr;
    return CUDA_SUCCESS;
  });
}

CUresult get_device(const char* function, CUstream handle, CUdevice* device, bool per_thread) {
  XCUDA_REQUIRE(device, CUDA_ERROR_INVALID_VALUE, "device output pointer is null");
  return with_stream(function, handle, per_thread, [&](Stream& stream) {
    *device = stream.context().device();
    return CUDA_SUCCESS;
  });
}

CUresult get_id(const char* function, CUstream handle, unsigned long long* id, bool per_thread) {
  XCUDA_REQUIRE(id, CUDA_ERROR_INVALID_VALUE, "id output pointer is null");
  return with_stream(function, handle, per_thread, [&](Stream& stream) {
    *id = stream.id();
    return CUDA_SUCCESS;
  });
}

// The launch attributes that are also stream attributes (CUDA's cudaStreamAttrID list).
bool is_stream_attribute(CUstreamAttrID attribute) {
  switch (attribute) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
      return true;
    default:
      return false;
  }
}

// What a stream reports for an attribute nobody set: the driver's documented defaults.
CUstreamAttrValue default_attribute(CUstreamAttrID attribute) {
  CUstreamAttrValue value{};
  if (attribute == CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY)
    value.syncPolicy = CU_SYNC_POLICY_AUTO;
  else if (attribute == CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP)
    value.memSyncDomainMap.remote = 1;
  return value;
}

static_assert(sizeof(CUstreamAttrValue) == sizeof(Stream::AttributeValue));

CUresult get_attribute(const char* function, CUstream handle, CUstreamAttrID attribute,
                       CUstreamAttrValue* value, bool per_thread) {
  XCUDA_REQUIRE(value, CUDA_ERROR_INVALID_VALUE, "value output pointer is null");
  XCUDA_REQUIRE(is_stream_attribute(attribute), CUDA_ERROR_INVALID_VALUE,
                fmt::format("attribute {} is not a stream attribute", static_cast<int>(attribute)));
  return with_stream(function, handle, per_thread, [&](Stream& stream) {
    *value = default_attribute(attribute);
    if (attribute == CU_LAUNCH_ATTRIBUTE_PRIORITY) {
      value->priority = stream.priority();
    } else if (auto stored = stream.attribute(attribute)) {
      std::memcpy(value, stored->data(), sizeof(*value));
    }
    return CUDA_SUCCESS;
  });
}

CUresult set_attribute(const char* function, CUstream handle, CUstreamAttrID attribute,
                       const CUstreamAttrValue* value, bool per_thread) {
  XCUDA_REQUIRE(value, CUDA_ERROR_INVALID_VALUE, "value pointer is null");
  XCUDA_REQUIRE(is_stream_attribute(attribute), CUDA_ERROR_INVALID_VALUE,
                fmt::format("attribute {} is not a stream attribute", static_cast<int>(attribute)));
  if (attribute == CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY)
    XCUDA_REQUIRE(value->syncPolicy >= CU_SYNC_POLICY_AUTO &&
                      value->syncPolicy <= CU_SYNC_POLICY_BLOCKING_SYNC,
                  CUDA_ERROR_INVALID_VALUE, "unknown synchronization policy");
  if (attribute == CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW)
    XCUDA_REQUIRE(value->accessPolicyWindow.hitRatio >= 0.0f &&
                      value->accessPolicyWindow.hitRatio <= 1.0f,
                  CUDA_ERROR_INVALID_VALUE, "access policy hit ratio outside [0, 1]");
  return with_stream(function, handle, per_thread, [&](Stream& stream) {
    if (attribute == CU_LAUNCH_ATTRIBUTE_PRIORITY) {
      stream.set_priority(std::clamp(value->priority, runtime::greatest_stream_priority,
                                     runtime::least_stream_priority));
    } else {
      Stream::AttributeValue stored;
      std::memcpy(stored.data(), value, sizeof(*value));
      stream.set_attribute(attribute, stored);
    }
    return CUDA_SUCCESS;
  });
}

CUresult copy_attributes(const char* function, CUstream destination, CUstream source,
                         bool per_thread) {
  CUresult status;
  Stream* from = api::resolve_stream(function, source, per_thread, status);
  if (!from) return status;
  return with_stream(function, destination, per_thread, [&](Stream& to) {
    to.copy_attributes_from(*from);
    return CUDA_SUCCESS;
  });
}

}  // namespace

XCUDA_EXPORT CUresult cuStreamGetFlags(CUstream stream, unsigned int* flags) {
  return get_flags(__func__, stream, flags, false);
}
XCUDA_EXPORT CUresult cuStreamGetFlags_ptsz(CUstream stream, unsigned int* flags) {
  return get_flags(__func__, stream, flags, true);
}

XCUDA_EXPORT CUresult cuStreamGetPriority(CUstream stream, int* priority) {
  return get_priority(__func__, stream, priority, false);
}
XCUDA_EXPORT CUresult cuStreamGetPriority_ptsz(CUstream stream, int* priority) {
  return get_priority(__func__, stream, priority, true);
}

XCUDA_EXPORT CUresult cuStreamGetCtx(CUstream stream, CUcontext* context) {
  return get_context(__func__, stream, context, nullptr, false);
}
XCUDA_EXPORT CUresult cuStreamGetCtx_ptsz(CUstream stream, CUcontext* context) {
  return get_context(__func__, stream, context, nullptr, true);
}
XCUDA_EXPORT CUresult cuStreamGetCtx_v2(CUstream stream, CUcontext* context,
                                        CUgreenCtx* green_context) {
  return get_context(__func__, stream, context, green_context, false);
}
XCUDA_EXPORT CUresult cuStreamGetCtx_v2_ptsz(CUstream stream, CUcontext* context,
                                             CUgreenCtx* green_context) {
  return get_context(__func__, stream, context, green_context, true);
}

XCUDA_EXPORT CUresult cuStreamGetDevice(CUstream stream, CUdevice* device) {
  return get_device(__func__, stream, device, false);
}
XCUDA_EXPORT CUresult cuStreamGetDevice_ptsz(CUstream stream, CUdevice* device) {
  return get_device(__func__, stream, device, true);
}

XCUDA_EXPORT CUresult cuStreamGetId(CUstream stream, unsigned long long* id) {
  return get_id(__func__, stream, id, false);
}
XCUDA_EXPORT CUresult cuStreamGetId_ptsz(CUstream stream, unsigned long long* id) {
  return get_id(__func__, stream, id, true);
}

XCUDA_EXPORT CUresult cuStreamGetAttribute(CUstream stream, CUstreamAttrID attribute,
                                           CUstreamAttrValue* value) {
  return get_attribute(__func__, stream, attribute, value, false);
}
XCUDA_EXPORT CUresult cuStreamGetAttribute_ptsz(CUstream stream, CUstreamAttrID attribute,
                                                CUstreamAttrValue* value) {
  return get_attribute(__func__, stream, attribute, value, true);
}

XCUDA_EXPORT CUresult cuStreamSetAttribute(CUstream stream, CUstreamAttrID attribute,
                                           const CUstreamAttrValue* value) {
  return set_attribute(__func__, stream, attribute, value, false);
}
XCUDA_EXPORT CUresult cuStreamSetAttribute_ptsz(CUstream stream, CUstreamAttrID attribute,
                                                const CUstreamAttrValue* value) {
  return set_attribute(__func__, stream, attribute, value, true);
}

XCUDA_EXPORT CUresult cuStreamCopyAttributes(CUstream destination, CUstream source) {
  return copy_attributes(__func__, destination, source, false);
}
XCUDA_EXPORT CUresult cuStreamCopyAttributes_ptsz(CUstream destination, CUstream source) {
  return copy_attributes(__func__, destination, source, true);
}

XCUDA_EXPORT CUresult cuStreamDestroy(CUstream stream) { return cuStreamDestroy_v2(stream); }
