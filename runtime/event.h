// CUDA events: a marker recorded into a stream, complete when the stream reaches it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "runtime/context.h"
#include "runtime/handles.h"
#include "runtime/status.h"

namespace xcuda::runtime {

class Event {
 public:
  Event(Context& context, bool timing);

  Context& context() const { return context_; }
  bool timing() const { return timing_; }

  void record(Stream& stream);
  // Captures all work of the event's context enqueued so far, in every stream, without
  // ordering any stream after another (cuCtxRecordEvent).
  void record_context();
  // True when the last recorded marker has been reached (or nothing was recorded).
  bool complete() const;
  void wait() const;
  // Milliseconds between two completed events. invalid_handle when either was never recorded,
  // not_ready while either is pending, as cuEventElapsedTime reports them.
  Expected<float> elapsed_since(const Event& start) const;
  // Makes work enqueued on `stream` after this call wait for the record made before it. The
  // wait holds the event's state, so the event may be destroyed before the stream gets there.
  void make_stream_wait(Stream& stream) const;
  // Makes every stream of the context, the legacy default one included, wait as above.
  void make_context_wait() const;

  // An interprocess event (CU_EVENT_INTERPROCESS) counts its records and the markers reached in
  // memory that other processes holding the event map too; `memory` keeps that mapping alive.
  struct SharedGenerations {
    std::atomic<uint64_t> recorded{0};
    std::atomic<uint64_t> reached{0};
  };
  // Before the event is recorded or handed out.
  void share(SharedGenerations* generations, std::shared_ptr<void> memory);
  // Null for an event of this process alone.
  const std::shared_ptr<void>& shared_memory() const { return state_->shared_memory; }

  // What queued markers and waits share with the event; outlives it while any is pending.
  struct State {
    std::mutex mutex;
    std::condition_variable reached_changed;
    uint64_t recorded_generation = 0;  // guarded by mutex
    uint64_t reached_generation = 0;   // guarded by mutex
    bool ever_recorded = false;        // guarded by mutex
    std::chrono::steady_clock::time_point timestamp;  // of the last marker reached; mutex
    // Where the generations live for an interprocess event, instead of the fields above, which
    // another process cannot see. Set before the event is used.
    SharedGenerations* shared = nullptr;
    std::shared_ptr<void> shared_memory;

    void reach(uint64_t generation);
    void wait_until(uint64_t generation);
    // When the last recorded marker was reached; errors as elapsed_since reports them.
    Expected<std::chrono::steady_clock::time_point> completion_time();
  };

 private:
  uint64_t next_generation();
  uint64_t last_generation() const;

  Context& context_;
  bool timing_;
  std::shared_ptr<State> state_;
};

HandleRegistry<Event>& live_events();

}  // namespace xcuda::runtime
