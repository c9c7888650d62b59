#include "runtime/graph_capture.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_set>

#include <fmt/format.h>

#include "runtime/log.h"

namespace xcuda::runtime {

namespace {

struct Capture {
  uint64_t id;
  CaptureMode mode;
  std::thread::id thread;
  Stream* origin;
  Graph* graph;
  std::unique_ptr<Graph> owned_graph;  // empty when the caller provided the graph
  bool invalidated = false;
};

struct StreamState {
  std::shared_ptr<Capture> capture;
  std::vector<Node*> dependencies;
};

struct EventState {
  std::weak_ptr<Capture> capture;
  std::vector<Node*> nodes;
};

// Everything below is guarded by `mutex`. `active` lets the enqueue path skip the lock while no
// stream captures, which is nearly always.
std::mutex mutex;
std::atomic<size_t> active{0};
std::map<const Stream*, StreamState> streams;
std::map<const Event*, EventState> events;
std::vector<std::weak_ptr<Capture>> captures;
thread_local CaptureMode thread_mode = CaptureMode::global;

uint64_t next_capture_id() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

StreamState* state_of(const Stream& stream) {
  auto found = streams.find(&stream);
  return found == streams.end() ? nullptr : &found->second;
}

// Every stream leaves the capture; its events stop counting as captured.
void finish(const std::shared_ptr<Capture>& capture) {
  std::erase_if(streams, [&](const auto& entry) { return entry.second.capture == capture; });
  std::erase_if(captures, [&](const auto& weak) {
    auto held = weak.lock();
    return !held || held == capture;
  });
  active.store(streams.size(), std::memory_order_release);
}

void invalidate(Capture& capture, std::string_view why) {
  if (!capture.invalidated)
    logger().warn("stream capture {} is invalidated: {}", capture.id, why);
  capture.invalidated = true;
}

// Every node `nodes` depends on, directly or not, and the nodes themselves.
std::unordered_set<const Node*> ancestors(const std::vector<Node*>& nodes) {
  std::unordered_set<const Node*> seen;
  std::vector<const Node*> pending(nodes.begin(), nodes.end());
  while (!pending.empty()) {
    const Node* node = pending.back();
    pending.pop_back();
    if (!seen.insert(node).second) continue;
    for (const Node* dependency : node->dependencies()) pending.push_back(dependency);
  }
  return seen;
}

}  // namespace

Status begin_capture(Stream& stream, CaptureMode mode, Graph* graph,
                     std::span<Node* const> dependencies) {
  if (stream.is_legacy_default())
    return make_error(ErrorCode::stream_capture_unsupported,
                      "the legacy default stream cannot be captured");
  std::lock_guard lock(mutex);
  if (state_of(stream))
    return make_error(ErrorCode::illegal_state, "the stream is capturing already");
  auto capture = std::make_shared<Capture>();
  capture->id = next_capture_id();
  capture->mode = mode;
  capture->thread = std::this_thread::get_id();
  capture->origin = &stream;
  if (!graph) {
    capture->owned_graph = std::make_unique<Graph>();
    graph = capture->owned_graph.get();
  }
  capture->graph = graph;
  streams[&stream] = StreamState{capture, {dependencies.begin(), dependencies.end()}};
  captures.push_back(capture);
  active.store(streams.size(), std::memory_order_release);
  return {};
}

Expected<Graph*> end_capture(Stream& stream) {
  std::lock_guard lock(mutex);
  StreamState* state = state_of(stream);
  if (!state) return make_error(ErrorCode::illegal_state, "the stream is not capturing");
  std::shared_ptr<Capture> capture = state->capture;
  if (capture->origin != &stream) {
    // Measured on NVIDIA's driver: the capture is broken too, and the origin's end reports it.
    invalidate(*capture, "its end was asked of a stream that joined it, not of its origin");
    return make_error(ErrorCode::stream_capture_unmatched,
                      "the capture was begun on another stream");
  }
  if (capture->mode != CaptureMode::relaxed && capture->thread != std::this_thread::get_id())
    return make_error(ErrorCode::stream_capture_wrong_thread,
                      "the capture was begun by another thread");
  // Every stream that joined the capture must have been joined back: its last work must come
  // before the origin stream's.
  std::unordered_set<const Node*> joined = ancestors(state->dependencies);
  bool unjoined = false;
  for (const auto& [other, other_state] : streams)
    if (other_state.capture == capture)
      for (const Node* node : other_state.dependencies) unjoined |= !joined.contains(node);
  finish(capture);
  if (capture->invalidated)
    return make_error(ErrorCode::stream_capture_invalidated,
                      fmt::format("capture {} was invalidated", capture->id));
  if (unjoined)
    return make_error(ErrorCode::stream_capture_unjoined,
                      "a stream that joined the capture was not joined back into the origin "
                      "stream");
  return capture->owned_graph ? capture->owned_graph.release() : capture->graph;
}

bool capture_in_progress() { return active.load(std::memory_order_acquire) != 0; }

CaptureInfo capture_info(const Stream& stream) {
  if (active.load(std::memory_order_acquire) == 0) return {};
  std::lock_guard lock(mutex);
  StreamState* state = state_of(stream);
  if (!state) return {};
  return CaptureInfo{
      state->capture->invalidated ? CaptureStatus::invalidated : CaptureStatus::active,
      state->capture->id, state->capture->graph, &state->dependencies};
}

Expected<Node*> capture(Stream& stream, NodeKind kind, NodeWork work, std::any parameters) {
  if (active.load(std::memory_order_acquire) == 0) return nullptr;
  std::lock_guard lock(mutex);
  StreamState* state = state_of(stream);
  if (!state) {
    if (!stream.is_legacy_default()) return nullptr;
    for (auto& [other, other_state] : streams) {
      if (&other->context() != &stream.context() || !other->blocking()) continue;
      invalidate(*other_state.capture, "the legacy default stream would wait for it");
      return make_error(ErrorCode::stream_capture_implicit,
                        "work on the legacy default stream would wait for a capturing stream");
    }
    return nullptr;
  }
  if (state->capture->invalidated)
    return make_error(ErrorCode::stream_capture_invalidated,
                      fmt::format("the stream's capture {} was invalidated", state->capture->id));
  Node& node = state->capture->graph->add(kind, std::move(work), std::move(parameters),
                                          state->dependencies);
  state->dependencies.assign(1, &node);
  return &node;
}

Status update_capture_dependencies(Stream& stream, std::span<Node* const> dependencies,
                                   bool replace) {
  std::lock_guard lock(mutex);
  StreamState* state = state_of(stream);
  if (!state) return make_error(ErrorCode::illegal_state, "the stream is not capturing");
  if (state->capture->invalidated)
    return make_error(ErrorCode::stream_capture_invalidated, "the capture was invalidated");
  for (Node* node : dependencies)
    if (!state->capture->graph->owns(*node))
      return make_error(ErrorCode::invalid_value, "a node is not in the capture's graph");
  if (replace) state->dependencies.clear();
  for (Node* node : dependencies)
    if (std::find(state->dependencies.begin(), state->dependencies.end(), node) ==
        state->dependencies.end())
      state->dependencies.push_back(node);
  return {};
}

Expected<bool> capture_event_record(const Event& event, Stream& stream) {
  std::lock_guard lock(mutex);
  StreamState* state = state_of(stream);
  if (!state) {
    events.erase(&event);
    return false;
  }
  if (state->capture->invalidated)
    return make_error(ErrorCode::stream_capture_invalidated, "the capture was invalidated");
  events[&event] = EventState{state->capture, state->dependencies};
  return true;
}

Expected<bool> capture_event_wait(const Event& event, Stream& stream) {
  std::lock_guard lock(mutex);
  auto recorded = events.find(&event);
  std::shared_ptr<Capture> source;
  if (recorded != events.end()) source = recorded->second.capture.lock();
  StreamState* state = state_of(stream);
  if (!source) {
    if (!state) return false;
    return make_error(ErrorCode::stream_capture_isolation,
                      "a capturing stream waits on an event recorded outside its capture");
  }
  if (state && state->capture != source) {
    invalidate(*state->capture, "it waited on an event of another capture");
    return make_error(ErrorCode::stream_capture_isolation,
                      "the event was recorded in another capture");
  }
  if (source->invalidated)
    return make_error(ErrorCode::stream_capture_invalidated, "the capture was invalidated");
  if (!state) {
    // A fork: the stream joins the capture, after the event's nodes.
    streams[&stream] = StreamState{source, recorded->second.nodes};
    active.store(streams.size(), std::memory_order_release);
    return true;
  }
  for (Node* node : recorded->second.nodes)
    if (std::find(state->dependencies.begin(), state->dependencies.end(), node) ==
        state->dependencies.end())
      state->dependencies.push_back(node);
  return true;
}

bool refuse_captured_event(const Event& event, std::string_view what) {
  std::lock_guard lock(mutex);
  auto recorded = events.find(&event);
  if (recorded == events.end()) return false;
  auto capture = recorded->second.capture.lock();
  bool under_way = capture && std::any_of(streams.begin(), streams.end(), [&](const auto& entry) {
                     return entry.second.capture == capture;
                   });
  if (under_way) invalidate(*capture, fmt::format("{} of an event recorded in the capture", what));
  return under_way;
}

void forget_event(const Event& event) {
  std::lock_guard lock(mutex);
  events.erase(&event);
}

Status refuse_if_capturing(Stream& stream, std::string_view what) {
  if (active.load(std::memory_order_acquire) == 0) return {};
  std::lock_guard lock(mutex);
  StreamState* state = state_of(stream);
  if (!state) return {};
  invalidate(*state->capture, fmt::format("{} on a capturing stream", what));
  return make_error(ErrorCode::stream_capture_unsupported,
                    fmt::format("{} is not permitted on a capturing stream", what));
}

Status check_unsafe_call(std::string_view what) {
  if (active.load(std::memory_order_acquire) == 0 || thread_mode == CaptureMode::relaxed)
    return {};
  std::lock_guard lock(mutex);
  std::thread::id self = std::this_thread::get_id();
  bool forbidden = false;
  for (const auto& weak : captures) {
    auto capture = weak.lock();
    if (!capture || capture->mode == CaptureMode::relaxed) continue;
    bool own = capture->thread == self;
    if (own || (thread_mode == CaptureMode::global && capture->mode == CaptureMode::global)) {
      invalidate(*capture, fmt::format("{} was called during the capture", what));
      forbidden = true;
    }
  }
  if (forbidden)
    return make_error(ErrorCode::stream_capture_unsupported,
                      fmt::format("{} is not permitted while a stream captures", what));
  return {};
}

CaptureMode exchange_thread_capture_mode(CaptureMode mode) {
  return std::exchange(thread_mode, mode);
}

void forget_stream(const Stream& stream) {
  std::lock_guard lock(mutex);
  StreamState* state = state_of(stream);
  if (!state) return;
  std::shared_ptr<Capture> capture = state->capture;
  if (capture->origin == &stream) {
    finish(capture);
  } else {
    streams.erase(&stream);
    active.store(streams.size(), std::memory_order_release);
  }
}

}  // namespace xcuda::runtime
