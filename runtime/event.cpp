#include "runtime/event.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace xcuda::runtime {

HandleRegistry<Event>& live_events() {
  static auto& registry = *new HandleRegistry<Event>;
  return registry;
}

namespace {

// A queue runs plain function pointers; this carries the event's state along.
struct Marker {
  std::shared_ptr<Event::State> state;
  uint64_t generation;
};

void reach_marker(void* data) {
  std::unique_ptr<Marker> marker(static_cast<Marker*>(data));
  marker->state->reach(marker->generation);
}

void wait_for_marker(void* data) {
  std::unique_ptr<Marker> marker(static_cast<Marker*>(data));
  marker->state->wait_until(marker->generation);
}

}  // namespace

void Event::State::reach(uint64_t generation) {
  if (shared) {
    uint64_t reached = shared->reached.load();
    while (reached < generation && !shared->reached.compare_exchange_weak(reached, generation)) {
    }
  }
  {
    std::lock_guard lock(mutex);
    if (generation > reached_generation) {
      reached_generation = generation;
      timestamp = std::chrono::steady_clock::now();
    }
  }
  reached_changed.notify_all();
}

void Event::State::wait_until(uint64_t generation) {
  // Another process's progress signals nothing here, so it is polled, ever less often.
  if (shared) {
    for (auto pause = std::chrono::microseconds(10); shared->reached.load() < generation;
         pause = std::min(pause * 2, std::chrono::microseconds(1000)))
      std::this_thread::sleep_for(pause);
    return;
  }
  std::unique_lock lock(mutex);
  reached_changed.wait(lock, [&] { return reached_generation >= generation; });
}

Event::Event(Context& context, bool timing)
    : context_(context), timing_(timing), state_(std::make_shared<State>()) {}

uint64_t Event::next_generation() {
  std::lock_guard lock(state_->mutex);
  state_->ever_recorded = true;
  if (state_->shared) return state_->shared->recorded.fetch_add(1) + 1;
  return ++state_->recorded_generation;
}

uint64_t Event::last_generation() const {
  std::lock_guard lock(state_->mutex);
  if (state_->shared) return state_->shared->recorded.load();
  return state_->recorded_generation;
}

void Event::share(SharedGenerations* generations, std::shared_ptr<void> memory) {
  std::lock_guard lock(state_->mutex);
  state_->shared = generations;
  state_->shared_memory = std::move(memory);
}

void Event::record(Stream& stream) {
  stream.order_for_new_work().host_function(reach_marker, new Marker{state_, next_generation()});
}

namespace {

// The marker of a context-wide record: reached when the last of its queues gets there.
struct Countdown {
  Marker marker;
  std::atomic<size_t> queues_left;
};

void count_down(void* data) {
  auto* holder = static_cast<std::shared_ptr<Countdown>*>(data);
  std::shared_ptr<Countdown> countdown = std::move(*holder);
  delete holder;
  if (countdown->queues_left.fetch_sub(1, std::memory_order_acq_rel) == 1)
    countdown->marker.state->reach(countdown->marker.generation);
}

}  // namespace

void Event::record_context() {
  std::vector<std::shared_ptr<Stream>> streams = context_.streams();
  auto countdown = std::make_shared<Countdown>();
  countdown->marker = Marker{state_, next_generation()};
  countdown->queues_left.store(streams.size() + 1, std::memory_order_relaxed);
  context_.legacy_stream().queue().host_function(count_down,
                                                 new std::shared_ptr<Countdown>(countdown));
  for (const auto& stream : streams)
    stream->queue().host_function(count_down, new std::shared_ptr<Countdown>(countdown));
}

bool Event::complete() const {
  std::lock_guard lock(state_->mutex);
  if (state_->shared) return state_->shared->reached.load() >= state_->shared->recorded.load();
  return state_->reached_generation >= state_->recorded_generation;
}

void Event::wait() const { state_->wait_until(last_generation()); }

Expected<std::chrono::steady_clock::time_point> Event::State::completion_time() {
  std::lock_guard lock(mutex);
  if (!ever_recorded) return make_error(ErrorCode::invalid_handle, "an event was never recorded");
  if (reached_generation < recorded_generation)
    return make_error(ErrorCode::not_ready, "an event has not completed yet");
  return timestamp;
}

Expected<float> Event::elapsed_since(const Event& start) const {
  auto begin = start.state_->completion_time();
  if (!begin) return begin.error();
  auto end = state_->completion_time();
  if (!end) return end.error();
  return std::chrono::duration<float, std::milli>(*end - *begin).count();
}

void Event::make_stream_wait(Stream& stream) const {
  // CUDA waits for the record made before this call, not for later re-records.
  stream.order_for_new_work().host_function(wait_for_marker,
                                            new Marker{state_, last_generation()});
}

void Event::make_context_wait() const {
  make_stream_wait(context_.legacy_stream());
  for (const auto& stream : context_.streams()) make_stream_wait(*stream);
}

}  // namespace xcuda::runtime
