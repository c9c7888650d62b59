#include "runtime/context.h"

#include <algorithm>
#include <map>

#include "runtime/log.h"
#include "runtime/memory.h"

namespace xcuda::runtime {

HandleRegistry<Context>& live_contexts() {
  static auto& registry = *new HandleRegistry<Context>;
  return registry;
}

HandleRegistry<Stream>& live_streams() {
  static auto& registry = *new HandleRegistry<Stream>;
  return registry;
}

namespace {

// Ids start at 1 so that 0 never names an object: zero-initialised output reads as unset.
uint64_t next_id() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

Stream::Stream(Context& context, std::unique_ptr<Queue> queue, bool blocking, int priority)
    : context_(context),
      queue_(std::move(queue)),
      blocking_(blocking),
      priority_(priority),
      id_(next_id()) {}

std::optional<Stream::AttributeValue> Stream::attribute(int id) const {
  std::lock_guard lock(attributes_mutex_);
  auto found = attributes_.find(id);
  if (found == attributes_.end()) return std::nullopt;
  return found->second;
}

void Stream::set_attribute(int id, const AttributeValue& value) {
  std::lock_guard lock(attributes_mutex_);
  attributes_[id] = value;
}

void Stream::copy_attributes_from(const Stream& source) {
  if (&source == this) return;
  std::scoped_lock lock(attributes_mutex_, source.attributes_mutex_);
  attributes_ = source.attributes_;
  set_priority(source.priority());
}

bool Stream::is_legacy_default() const { return &context_.legacy_stream() == this; }

Queue& Stream::order_for_new_work() {
  if (is_legacy_default()) {
    for (const auto& other : context_.streams())
      if (other->blocking()) queue_->wait_for(other->queue());
  } else if (blocking_) {
    queue_->wait_for(context_.legacy_stream().queue());
  }
  return *queue_;
}

Context::Context(int device, unsigned flags) : device_(device), flags_(flags), id_(next_id()) {
  legacy_stream_ = std::make_unique<Stream>(*this, backend().create_queue(device), true, 0);
  live_streams().add(legacy_stream_.get());
  live_contexts().add(this);
}

Context::~Context() {
  // Work still queued may touch memory freed below: let it finish first.
  (void)synchronize();
  for (auto& [key, local] : locals_)
    if (local.destructor) local.destructor(this, key, local.value);
  live_contexts().remove(this);
  for (auto& stream : streams_) live_streams().remove(stream.get());
  live_streams().remove(legacy_stream_.get());
  for (const Allocation& allocation : memory_registry().remove_all(this))
    if (allocation.owned) (void)backend().release(device_, reinterpret_cast<void*>(allocation.base));
}

Stream& Context::per_thread_stream() {
  // One stream per (thread, context); it lives as long as the context.
  thread_local std::map<const Context*, Stream*> per_thread;
  // A context at the address of a destroyed one must not inherit that one's stream.
  auto found = per_thread.find(this);
  if (found != per_thread.end() && live_streams().contains(found->second) &&
      &found->second->context() == this)
    return *found->second;
  Stream* stream = create_stream(true, 0).value();
  per_thread[this] = stream;
  return *stream;
}

Expected<Stream*> Context::create_stream(bool blocking, int priority) {
  auto queue = backend().create_queue(device_);
  if (!queue)
    return make_error(ErrorCode::invalid_context,
                      "the backend has no queue for device " + std::to_string(device_));
  auto stream = std::make_shared<Stream>(*this, std::move(queue), blocking, priority);
  Stream* result = stream.get();
  std::lock_guard lock(mutex_);
  streams_.push_back(std::move(stream));
  live_streams().add(result);
  return result;
}

Status Context::destroy_stream(Stream* stream) {
  std::shared_ptr<Stream> doomed;
  {
    std::lock_guard lock(mutex_);
    auto found = std::find_if(streams_.begin(), streams_.end(),
                              [&](const auto& owned) { return owned.get() == stream; });
    if (found == streams_.end())
      return make_error(ErrorCode::invalid_handle, "stream does not belong to this context");
    doomed = std::move(*found);
    streams_.erase(found);
  }
  live_streams().remove(stream);
  // cuStreamDestroy returns at once but the stream's queued work still completes.
  Status status = doomed->queue().synchronize();
  if (!status) record_fault(status.error());
  return {};
}

std::vector<std::shared_ptr<Stream>> Context::streams() {
  std::lock_guard lock(mutex_);
  return streams_;
}

std::optional<size_t> Context::limit(int which) const {
  std::lock_guard lock(mutex_);
  auto found = limits_.find(which);
  if (found == limits_.end()) return std::nullopt;
  return found->second;
}

void Context::set_limit(int which, size_t value) {
  std::lock_guard lock(mutex_);
  limits_[which] = value;
}

bool Context::enable_peer_access(uint64_t peer_id) {
  std::lock_guard lock(mutex_);
  return peers_.insert(peer_id).second;
}

bool Context::disable_peer_access(uint64_t peer_id) {
  std::lock_guard lock(mutex_);
  return peers_.erase(peer_id) != 0;
}

void Context::set_local(void* key, void* value, LocalDestructor destructor) {
  std::lock_guard lock(mutex_);
  locals_[key] = LocalValue{value, destructor};
}

std::optional<void*> Context::local(void* key) const {
  std::lock_guard lock(mutex_);
  auto found = locals_.find(key);
  if (found == locals_.end()) return std::nullopt;
  return found->second.value;
}

void Context::remove_local(void* key) {
  std::lock_guard lock(mutex_);
  locals_.erase(key);
}

Status Context::synchronize() {
  Status first = legacy_stream_->queue().synchronize();
  for (const auto& stream : streams()) {
    Status status = stream->queue().synchronize();
    if (first && !status) first = status;
  }
  if (!first) record_fault(first.error());
  if (auto error = fault()) return *error;
  return {};
}

void Context::record_fault(const Error& error) {
  std::lock_guard lock(mutex_);
  if (!fault_) {
    logger().error("context on device {}: {} (sticky: every later call on this context fails)",
                   device_, error.message);
    fault_ = error;
  }
}

std::optional<Error> Context::fault() const {
  std::lock_guard lock(mutex_);
  return fault_;
}

namespace {

struct PrimaryContext {
  std::unique_ptr<Context> context;
  unsigned retain_count = 0;
  unsigned flags = 0;
};

std::mutex primary_mutex;

PrimaryContext& primary(int device) {
  static auto& table = *new std::map<int, PrimaryContext>;
  return table[device];
}

thread_local std::vector<Context*> context_stack;

}  // namespace

Context& retain_primary_context(int device) {
  std::lock_guard lock(primary_mutex);
  PrimaryContext& entry = primary(device);
  if (!entry.context) entry.context = std::make_unique<Context>(device, entry.flags);
  ++entry.retain_count;
  return *entry.context;
}

bool release_primary_context(int device) {
  std::unique_ptr<Context> doomed;
  {
    std::lock_guard lock(primary_mutex);
    PrimaryContext& entry = primary(device);
    if (entry.retain_count == 0) return false;
    if (--entry.retain_count == 0) doomed = std::move(entry.context);
  }
  return true;
}

Context* primary_context_if_active(int device) {
  std::lock_guard lock(primary_mutex);
  return primary(device).context.get();
}

unsigned primary_context_flags(int device) {
  std::lock_guard lock(primary_mutex);
  return primary(device).flags;
}

Status set_primary_context_flags(int device, unsigned flags) {
  std::lock_guard lock(primary_mutex);
  PrimaryContext& entry = primary(device);
  entry.flags = flags;
  if (entry.context) entry.context->set_flags(flags);
  return {};
}

Status reset_primary_context(int device) {
  std::unique_ptr<Context> doomed;
  std::lock_guard lock(primary_mutex);
  PrimaryContext& entry = primary(device);
  doomed = std::move(entry.context);
  entry.retain_count = 0;
  return {};
}

Context* current_context() {
  while (!context_stack.empty() && !live_contexts().contains(context_stack.back()))
    context_stack.pop_back();
  return context_stack.empty() ? nullptr : context_stack.back();
}

void set_current_context(Context* context) {
  if (context_stack.empty()) {
    if (context) context_stack.push_back(context);
  } else if (context) {
    context_stack.back() = context;
  } else {
    context_stack.pop_back();
  }
}

void push_current_context(Context* context) { context_stack.push_back(context); }

Context* pop_current_context() {
  Context* top = current_context();
  if (top) context_stack.pop_back();
  return top;
}

}  // namespace xcuda::runtime
