// Events: markers in streams, for ordering and timing.
#include "src/api.h"
#include "src/graph.h"

#include "runtime/event.h"
#include "runtime/interprocess_event.h"

using namespace xcuda;
using runtime::Event;

namespace {

Event* as_event(CUevent handle) { return reinterpret_cast<Event*>(handle); }

CUresult record(const char* function, CUevent handle, CUstream stream_handle, unsigned flags,
                bool per_thread) {
  XCUDA_REQUIRE(runtime::live_events().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live event");
  // CU_EVENT_RECORD_EXTERNAL only matters inside stream capture; outside it is a plain record.
  XCUDA_REQUIRE((flags & ~CU_EVENT_RECORD_EXTERNAL) == 0, CUDA_ERROR_INVALID_VALUE,
                "unknown flags");
  CUresult status;
  runtime::Stream* stream = api::resolve_stream(function, stream_handle, per_thread, status);
  if (!stream) return status;
  XCUDA_REQUIRE(&stream->context() == &as_event(handle)->context(), CUDA_ERROR_INVALID_HANDLE,
                "event and stream belong to different contexts");
  // Inside a capture the record marks a point of the graph that other streams may fork from
  // or join at; an external record is a node of its own.
  if (flags & CU_EVENT_RECORD_EXTERNAL) {
    bool captured = false;
    CUresult status = api::capture_work(
        function, *stream, runtime::NodeKind::event_record,
        [handle](runtime::Stream& target) {
          if (runtime::live_events().contains(handle)) as_event(handle)->record(target);
        },
        captured);
    if (status != CUDA_SUCCESS || captured) return status;
  }
  auto marked = runtime::capture_event_record(*as_event(handle), *stream);
  if (!marked) return api::fail(function, marked.error());
  if (!*marked) as_event(handle)->record(*stream);
  return CUDA_SUCCESS;
}

}  // namespace

XCUDA_EXPORT CUresult cuEventCreate(CUevent* result, unsigned int flags) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "event output pointer is null");
  constexpr unsigned known =
      CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
  XCUDA_REQUIRE((flags & ~known) == 0, CUDA_ERROR_INVALID_VALUE, "unknown flags");
  XCUDA_REQUIRE(!(flags & CU_EVENT_INTERPROCESS) || (flags & CU_EVENT_DISABLE_TIMING),
                CUDA_ERROR_INVALID_VALUE,
                "CU_EVENT_INTERPROCESS requires CU_EVENT_DISABLE_TIMING");
  CUresult status;
  runtime::Context* context = api::current_context(__func__, status);
  if (!context) return status;
  // Every host-side wait blocks on a condition variable, which is what CU_EVENT_BLOCKING_SYNC
  // asks for; without it a GPU driver may spin instead, a difference no program can observe.
  auto* event = new Event(*context, (flags & CU_EVENT_DISABLE_TIMING) == 0);
  if (flags & CU_EVENT_INTERPROCESS) {
    if (Status shared = runtime::make_interprocess(*event); !shared) {
      delete event;
      return api::fail(__func__, shared.error());
    }
  }
  runtime::live_events().add(event);
  *result = reinterpret_cast<CUevent>(event);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuEventDestroy_v2(CUevent handle) {
  XCUDA_REQUIRE(runtime::live_events().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live event");
  // Markers and waits still queued hold the event's state, not the event: CUDA lets an event
  // be destroyed before the work that records or awaits it completes.
  runtime::live_events().remove(as_event(handle));
  runtime::forget_event(*as_event(handle));
  delete as_event(handle);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuEventDestroy(CUevent handle) { return cuEventDestroy_v2(handle); }

XCUDA_EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
  return record(__func__, event, stream, 0, false);
}
XCUDA_EXPORT CUresult cuEventRecord_ptsz(CUevent event, CUstream stream) {
  return record(__func__, event, stream, 0, true);
}
XCUDA_EXPORT CUresult cuEventRecordWithFlags(CUevent event, CUstream stream, unsigned int flags) {
  return record(__func__, event, stream, flags, false);
}
XCUDA_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent event, CUstream stream,
                                                  unsigned int flags) {
  return record(__func__, event, stream, flags, true);
}

XCUDA_EXPORT CUresult cuEventQuery(CUevent handle) {
  XCUDA_REQUIRE(runtime::live_events().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live event");
  XCUDA_REQUIRE(!runtime::refuse_captured_event(*as_event(handle), __func__), CUDA_ERROR_CAPTURED_EVENT,
                "the event was recorded in a capture still under way");
  return as_event(handle)->complete() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

XCUDA_EXPORT CUresult cuEventSynchronize(CUevent handle) {
  XCUDA_REQUIRE(runtime::live_events().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live event");
  XCUDA_REQUIRE(!runtime::refuse_captured_event(*as_event(handle), __func__), CUDA_ERROR_CAPTURED_EVENT,
                "the event was recorded in a capture still under way");
  as_event(handle)->wait();
  if (auto fault = as_event(handle)->context().fault()) return api::fail(__func__, *fault);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuEventElapsedTime_v2(float* milliseconds, CUevent start, CUevent end) {
  XCUDA_REQUIRE(milliseconds, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  XCUDA_REQUIRE(runtime::live_events().contains(start) && runtime::live_events().contains(end),
                CUDA_ERROR_INVALID_HANDLE, "not a live event");
  XCUDA_REQUIRE(as_event(start)->timing() && as_event(end)->timing(), CUDA_ERROR_INVALID_HANDLE,
                "event was created with CU_EVENT_DISABLE_TIMING");
  auto elapsed = as_event(end)->elapsed_since(*as_event(start));
  if (!elapsed) return api::fail(__func__, elapsed.error());
  *milliseconds = *elapsed;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuEventElapsedTime(float* milliseconds, CUevent start, CUevent end) {
  return cuEventElapsedTime_v2(milliseconds, start, end);
}
