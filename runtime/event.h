// CUDA events: a marker recorded into a stream, complete when the stream reaches it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "runtime/context.h"
#include "runtime/handles.h"

namespace xcuda::runtime {

class Event {
 public:
  Event(Context& context, bool timing) : context_(context), timing_(timing) {}

  Context& context() const { return context_; }
  bool timing() const { return timing_; }

  void record(Stream& stream);
  // True when the last recorded marker has been reached (or nothing was recorded).
  bool complete() const;
  void wait() const;
  void wait_until(uint64_t generation) const;
  // Milliseconds between two completed events; nullopt while either is pending or unrecorded.
  std::optional<float> elapsed_since(const Event& start) const;
  // Makes work enqueued on `stream` after this call wait for the recorded marker.
  void make_stream_wait(Stream& stream) const;

 private:
  void reach(uint64_t generation);

  Context& context_;
  bool timing_;
  mutable std::mutex mutex_;
  mutable std::condition_variable reached_;
  uint64_t recorded_generation_ = 0;
  uint64_t reached_generation_ = 0;
  bool ever_recorded_ = false;
  std::chrono::steady_clock::time_point timestamp_;
};

HandleRegistry<Event>& live_events();

}  // namespace xcuda::runtime
