// Devices, contexts and streams: the CUDA object model above the backend.
//
// A context owns streams, modules and memory on one device. Each device has one primary
// context (what the runtime API uses), retained and released by count. Faults met while
// running a context's work are sticky: once one happens every later call on that context
// reports it, as on a real GPU.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "runtime/backend.h"
#include "runtime/handles.h"
#include "runtime/status.h"

namespace xcuda::runtime {

class Context;

// The stream priorities a context offers, as NVIDIA GPUs report them (lower is more urgent).
// The host backend runs every priority alike.
constexpr int least_stream_priority = 0;
constexpr int greatest_stream_priority = -5;

class Stream {
 public:
  // `blocking` streams order themselves against the context's legacy default stream.
  Stream(Context& context, std::unique_ptr<Queue> queue, bool blocking, int priority);

  Context& context() const { return context_; }
  Queue& queue() const { return *queue_; }
  bool blocking() const { return blocking_; }
  int priority() const { return priority_.load(std::memory_order_relaxed); }
  void set_priority(int priority) { priority_.store(priority, std::memory_order_relaxed); }
  // Unique in the process for its lifetime, as cuStreamGetId promises.
  uint64_t id() const { return id_; }
  bool is_legacy_default() const;

  // Attributes set through cuStreamSetAttribute, kept as the API layer's opaque values: the
  // host backend has no use for access-policy windows or memory synchronisation domains.
  using AttributeValue = std::array<std::byte, 64>;
  std::optional<AttributeValue> attribute(int id) const;
  void set_attribute(int id, const AttributeValue& value);
  void copy_attributes_from(const Stream& source);

  // Every enqueue goes through here so legacy-default-stream ordering holds: the legacy
  // stream waits for every blocking stream, and a blocking stream waits for the legacy stream.
  Queue& order_for_new_work();

 private:
  Context& context_;
  std::unique_ptr<Queue> queue_;
  bool blocking_;
  std::atomic<int> priority_;
  uint64_t id_;
  mutable std::mutex attributes_mutex_;
  std::map<int, AttributeValue> attributes_;  // guarded by attributes_mutex_
};

class Context {
 public:
  Context(int device, unsigned flags);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int device() const { return device_; }
  unsigned flags() const { return flags_.load(std::memory_order_relaxed); }
  void set_flags(unsigned flags) { flags_.store(flags, std::memory_order_relaxed); }
  // Unique in the process for its lifetime, as cuCtxGetId promises.
  uint64_t id() const { return id_; }

  // Values of cuCtxSetLimit, keyed by the API's enumerators: kept and reported back, since the
  // host device has no fixed-size stacks or FIFOs to resize.
  std::optional<size_t> limit(int which) const;
  void set_limit(int which, size_t value);

  Stream& legacy_stream() { return *legacy_stream_; }
  // The calling thread's per-thread default stream (cudaStreamPerThread).
  Stream& per_thread_stream();
  Expected<Stream*> create_stream(bool blocking, int priority);
  Status destroy_stream(Stream* stream);
  // Shared so that a stream another thread destroys meanwhile stays valid for the caller.
  std::vector<std::shared_ptr<Stream>> streams();

  // Peer access this context has enabled to others (cuCtxEnablePeerAccess), by context id so
  // that a destroyed peer's address, reused, does not inherit it. False when already enabled
  // (enable) or not enabled (disable).
  bool enable_peer_access(uint64_t peer_id);
  bool disable_peer_access(uint64_t peer_id);

  // Values other libraries (cudart) attach to a context, destroyed with it. The destructor
  // receives the context, the key and the value.
  using LocalDestructor = void (*)(void* context, void* key, void* value);
  void set_local(void* key, void* value, LocalDestructor destructor);
  std::optional<void*> local(void* key) const;
  void remove_local(void* key);

  // Waits for all work of the context, then reports its sticky fault, if any.
  Status synchronize();
  // A fault met while running queued work: remembered for every later call.
  void record_fault(const Error& error);
  std::optional<Error> fault() const;

 private:
  int device_;
  std::atomic<unsigned> flags_;
  uint64_t id_;
  std::map<int, size_t> limits_;  // guarded by mutex_
  std::set<uint64_t> peers_;      // guarded by mutex_
  std::unique_ptr<Stream> legacy_stream_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<Stream>> streams_;
  std::optional<Error> fault_;
  struct LocalValue {
    void* value;
    LocalDestructor destructor;
  };
  std::map<void*, LocalValue> locals_;
};

HandleRegistry<Context>& live_contexts();
HandleRegistry<Stream>& live_streams();

// The primary context of `device`, created on first retain.
Context& retain_primary_context(int device);
// Returns false when the primary context was not retained.
bool release_primary_context(int device);
Context* primary_context_if_active(int device);
unsigned primary_context_flags(int device);
Status set_primary_context_flags(int device, unsigned flags);
Status reset_primary_context(int device);

// The calling thread's context stack (cuCtxPushCurrent / cuCtxPopCurrent / cuCtxSetCurrent).
// A context destroyed while another thread holds it as current reads there as no context.
Context* current_context();
void set_current_context(Context* context);
void push_current_context(Context* context);
Context* pop_current_context();

}  // namespace xcuda::runtime
