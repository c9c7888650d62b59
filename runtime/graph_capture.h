// Stream capture: while a stream captures, the work enqueued on it becomes nodes of a graph
// instead of running. Other streams join a capture by waiting on an event recorded in it (a
// fork) and leave it when the origin stream waits on an event they record (a join).
//
// The capture mode decides which "potentially unsafe" calls (cuMemAlloc, synchronous copies)
// are refused while a capture is under way, as cuStreamBeginCapture documents: a global capture
// forbids them to every thread whose own mode is not relaxed, a thread-local one only to the
// thread that began it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/graph.h"

namespace xcuda::runtime {

// CUstreamCaptureMode's values, in its order.
enum class CaptureMode { global, this_thread, relaxed };

enum class CaptureStatus { none, active, invalidated };

struct CaptureInfo {
  CaptureStatus status = CaptureStatus::none;
  uint64_t id = 0;
  Graph* graph = nullptr;
  // The nodes the stream's next work will depend on. Stays valid until the stream's capture
  // dependencies change.
  const std::vector<Node*>* dependencies = nullptr;
};

// illegal_state when the stream captures already; stream_capture_unsupported for the legacy
// default stream, which cannot capture. With `graph`, nodes are added to it after
// `dependencies` (cuStreamBeginCaptureToGraph) and it stays the caller's.
Status begin_capture(Stream& stream, CaptureMode mode, Graph* graph = nullptr,
                     std::span<Node* const> dependencies = {});
// Ends the capture that `stream` began: the graph, which the caller owns unless it provided it.
// illegal_state when the stream does not capture, stream_capture_unmatched when another
// stream began the capture, stream_capture_wrong_thread when another thread began a capture
// that is not relaxed, stream_capture_unjoined when a forked stream was not joined back,
// stream_capture_invalidated when something broke it; all but the first three end it.
Expected<Graph*> end_capture(Stream& stream);
CaptureInfo capture_info(const Stream& stream);
// Some stream of the process captures: the cheap test enqueueing paths make first.
bool capture_in_progress();

// When `stream` captures, adds `work` as a node after the stream's dependencies and makes it
// the stream's only dependency: the node. nullptr when the stream does not capture;
// stream_capture_invalidated when its capture was invalidated. For the legacy default stream, which never captures, fails with
// stream_capture_implicit when a blocking stream of its context captures, because the work
// would have to wait for that stream.
Expected<Node*> capture(Stream& stream, NodeKind kind, NodeWork work, std::any parameters);
// cuStreamUpdateCaptureDependencies: adds to the stream's dependencies or replaces them.
Status update_capture_dependencies(Stream& stream, std::span<Node* const> dependencies,
                                   bool replace);

// An event recorded on a capturing stream marks the stream's dependencies at that point: true.
// False when the stream does not capture (a plain record, which forgets any earlier captured
// one).
Expected<bool> capture_event_record(const Event& event, Stream& stream);
// A stream waiting on an event recorded in a capture joins that capture after the event's
// nodes: true. False when the event was not recorded in a capture and the stream does not
// capture. A capturing stream may not wait on an event recorded outside its capture
// (stream_capture_isolation) or in another capture (stream_capture_merge is reported as
// stream_capture_isolation too).
Expected<bool> capture_event_wait(const Event& event, Stream& stream);
// The event was last recorded in a capture still under way: cuEventQuery and cuEventSynchronize
// refuse it (CUDA_ERROR_CAPTURED_EVENT), and the capture is invalidated, as NVIDIA's driver 580
// does (its end then answers stream_capture_invalidated).
bool refuse_captured_event(const Event& event, std::string_view what);
// The event is destroyed: a later event at its address starts clean.
void forget_event(const Event& event);

// A call that would wait for or query a capturing stream: stream_capture_unsupported, and the
// capture is invalidated.
Status refuse_if_capturing(Stream& stream, std::string_view what);
// A "potentially unsafe" call (cuMemAlloc, a synchronous copy): stream_capture_unsupported
// when a capture forbids it to this thread; the captures that forbid it are invalidated.
Status check_unsafe_call(std::string_view what);
// cuThreadExchangeStreamCaptureMode.
CaptureMode exchange_thread_capture_mode(CaptureMode mode);
// The stream is destroyed: it leaves any capture.
void forget_stream(const Stream& stream);

}  // namespace xcuda::runtime
