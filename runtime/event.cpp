#include "runtime/event.h"

namespace xcuda::runtime {

HandleRegistry<Event>& live_events() {
  static auto& registry = *new HandleRegistry<Event>;
  return registry;
}

namespace {

// A queue runs plain function pointers; these carry the event along.
struct Marker {
  Event* event;
  uint64_t generation;
  void (Event::*action)(uint64_t);
};

void run_marker(void* data) {
  Marker* marker = static_cast<Marker*>(data);
  (marker->event->*marker->action)(marker->generation);
  delete marker;
}

}  // namespace

void Event::record(Stream& stream) {
  uint64_t generation;
  {
    std::lock_guard lock(mutex_);
    generation = ++recorded_generation_;
    ever_recorded_ = true;
  }
  stream.order_for_new_work().host_function(run_marker, new Marker{this, generation, &Event::reach});
}

void Event::reach(uint64_t generation) {
  std::lock_guard lock(mutex_);
  if (generation > reached_generation_) {
    reached_generation_ = generation;
    timestamp_ = std::chrono::steady_clock::now();
  }
  reached_.notify_all();
}

bool Event::complete() const {
  std::lock_guard lock(mutex_);
  return reached_generation_ >= recorded_generation_;
}

void Event::wait() const {
  uint64_t target;
  {
    std::lock_guard lock(mutex_);
    target = recorded_generation_;
  }
  wait_until(target);
}

void Event::wait_until(uint64_t generation) const {
  std::unique_lock lock(mutex_);
  reached_.wait(lock, [&] { return reached_generation_ >= generation; });
}

std::optional<float> Event::elapsed_since(const Event& start) const {
  std::scoped_lock lock(mutex_, start.mutex_);
  if (!ever_recorded_ || !start.ever_recorded_) return std::nullopt;
  if (reached_generation_ < recorded_generation_ ||
      start.reached_generation_ < start.recorded_generation_)
    return std::nullopt;
  std::chrono::duration<float, std::milli> difference = timestamp_ - start.timestamp_;
  return difference.count();
}

namespace {

struct Waiter {
  const Event* event;
  uint64_t generation;
};

void run_waiter(void* data) {
  Waiter* waiter = static_cast<Waiter*>(data);
  waiter->event->wait_until(waiter->generation);
  delete waiter;
}

}  // namespace

void Event::make_stream_wait(Stream& stream) const {
  // CUDA waits for the record made before this call, not for later re-records.
  uint64_t generation;
  {
    std::lock_guard lock(mutex_);
    generation = recorded_generation_;
  }
  stream.order_for_new_work().host_function(run_waiter, new Waiter{this, generation});
}

}  // namespace xcuda::runtime
