#include "runtime/memory_pool.h"

#include <algorithm>
#include <bit>

#include "runtime/backend.h"
#include "runtime/environment.h"
#include "runtime/log.h"

namespace xcuda::runtime {

MemoryPool::MemoryPool(int device, uint64_t release_threshold, uint64_t max_bytes)
    : device_(device), max_bytes_(max_bytes), release_threshold_(release_threshold) {}

MemoryPool::~MemoryPool() {
  std::lock_guard lock(mutex_);
  trim_locked(0);
}

size_t MemoryPool::size_class(size_t bytes) {
  constexpr size_t smallest = 256;
  if (bytes <= smallest) return smallest;
  if (bytes > SIZE_MAX / 2) return bytes;
  size_t step = std::bit_floor(bytes) / 4;
  return (bytes + step - 1) / step * step;
}

size_t MemoryPool::class_index(size_t block_bytes) {
  if (block_bytes > SIZE_MAX / 2) return class_count;
  // block_bytes = step * (4..7) with step a quarter of its power of two (size_class).
  size_t power = static_cast<size_t>(std::bit_width(block_bytes)) - 1;
  return (power - 8) * 4 + (block_bytes >> (power - 2)) - 4;
}

Expected<void*> MemoryPool::allocate(size_t bytes) {
  size_t block_bytes = size_class(bytes);
  size_t index = class_index(block_bytes);
  std::unique_lock lock(mutex_);
  void* block = nullptr;
  if (index < class_count && !cached_[index].empty()) {
    block = cached_[index].back();
    cached_[index].pop_back();
    cached_bytes_ -= block_bytes;
  } else {
    if (max_bytes_ && usage_.reserved + block_bytes > max_bytes_) {
      trim_locked(max_bytes_ > block_bytes ? max_bytes_ - block_bytes : 0);
      if (usage_.reserved + block_bytes > max_bytes_)
        return make_error(ErrorCode::out_of_memory,
                          "memory pool limit of " + std::to_string(max_bytes_) +
                              " bytes reached allocating " + std::to_string(bytes) + " bytes");
    }
    // The backend may be slow: let other threads use the pool meanwhile.
    lock.unlock();
    Expected<void*> fresh = backend().allocate(device_, block_bytes);
    if (!fresh) return fresh.error();
    block = *fresh;
    lock.lock();
    usage_.reserved += block_bytes;
    usage_.reserved_high = std::max(usage_.reserved_high, usage_.reserved);
  }
  usage_.used += block_bytes;
  usage_.used_high = std::max(usage_.used_high, usage_.used);
  return block;
}

void MemoryPool::release(void* block, size_t bytes) {
  size_t block_bytes = size_class(bytes);
  std::lock_guard lock(mutex_);
  usage_.used -= std::min<uint64_t>(usage_.used, block_bytes);
  size_t index = class_index(block_bytes);
  if (index < class_count && cached_bytes_ + block_bytes <= release_threshold_) {
    cached_[index].push_back(block);
    cached_bytes_ += block_bytes;
    return;
  }
  usage_.reserved -= std::min<uint64_t>(usage_.reserved, block_bytes);
  if (Status status = backend().release(device_, block); !status)
    logger().error("memory pool: {}", status.error().message);
}

void MemoryPool::trim_to(uint64_t keep_bytes) {
  std::lock_guard lock(mutex_);
  trim_locked(keep_bytes);
}

// Largest blocks go first: they free the most memory per backend call.
void MemoryPool::trim_locked(uint64_t keep_bytes) {
  for (size_t index = class_count; index-- > 0 && cached_bytes_ > 0 &&
                                   usage_.reserved > keep_bytes;) {
    std::vector<void*>& blocks = cached_[index];
    // The inverse of class_index.
    size_t block_bytes = (size_t{4} + index % 4) << (index / 4 + 6);
    while (!blocks.empty() && usage_.reserved > keep_bytes) {
      if (Status status = backend().release(device_, blocks.back()); !status)
        logger().error("memory pool: {}", status.error().message);
      blocks.pop_back();
      cached_bytes_ -= block_bytes;
      usage_.reserved -= block_bytes;
    }
  }
}

MemoryPool::Usage MemoryPool::usage() const {
  std::lock_guard lock(mutex_);
  return usage_;
}

void MemoryPool::reset_reserved_high() {
  std::lock_guard lock(mutex_);
  usage_.reserved_high = usage_.reserved;
}

void MemoryPool::reset_used_high() {
  std::lock_guard lock(mutex_);
  usage_.used_high = usage_.used;
}

uint64_t MemoryPool::release_threshold() const {
  std::lock_guard lock(mutex_);
  return release_threshold_;
}

void MemoryPool::set_release_threshold(uint64_t bytes) {
  std::lock_guard lock(mutex_);
  release_threshold_ = bytes;
  trim_locked(usage_.used + bytes);
}

namespace {

struct DevicePools {
  std::shared_ptr<MemoryPool> allocation;  // behind cuMemAlloc
  std::shared_ptr<MemoryPool> default_pool;
  MemoryPool* current = nullptr;
};

std::mutex pools_mutex;
// Handles the application holds; guarded by pools_mutex.
std::map<MemoryPool*, std::shared_ptr<MemoryPool>>& named_pools() {
  static auto& pools = *new std::map<MemoryPool*, std::shared_ptr<MemoryPool>>;
  return pools;
}

// Guarded by pools_mutex. Never destroyed: blocks may still be freed during process exit.
DevicePools& device_pools(int device) {
  static auto& table = *new std::map<int, DevicePools>;
  DevicePools& pools = table[device];
  if (!pools.allocation) {
    pools.allocation = std::make_shared<MemoryPool>(device, environment().pool_bytes);
    // CUDA's default release threshold is 0: freed memory goes back at once.
    pools.default_pool = std::make_shared<MemoryPool>(device, 0);
    pools.current = pools.default_pool.get();
    live_memory_pools().add(pools.default_pool.get());
  }
  return pools;
}

}  // namespace

std::shared_ptr<MemoryPool> device_allocation_pool(int device) {
  // Every cuMemAlloc asks; device pools live as long as the process, so each thread keeps the
  // last one it got rather than taking the lock again.
  thread_local int cached_device = -1;
  thread_local std::shared_ptr<MemoryPool> cached;
  if (device == cached_device) return cached;
  std::lock_guard lock(pools_mutex);
  cached = device_pools(device).allocation;
  cached_device = device;
  return cached;
}

HandleRegistry<MemoryPool>& live_memory_pools() {
  static auto& registry = *new HandleRegistry<MemoryPool>;
  return registry;
}

MemoryPool* create_memory_pool(int device, uint64_t max_bytes) {
  auto pool = std::make_shared<MemoryPool>(device, 0, max_bytes);
  std::lock_guard lock(pools_mutex);
  named_pools()[pool.get()] = pool;
  live_memory_pools().add(pool.get());
  return pool.get();
}

bool destroy_memory_pool(MemoryPool* pool) {
  std::shared_ptr<MemoryPool> doomed;
  {
    std::lock_guard lock(pools_mutex);
    auto found = named_pools().find(pool);
    if (found == named_pools().end()) return false;
    doomed = std::move(found->second);
    named_pools().erase(found);
    live_memory_pools().remove(pool);
    // A device whose current pool goes away falls back to its default pool, as in CUDA.
    DevicePools& pools = device_pools(pool->device());
    if (pools.current == pool) pools.current = pools.default_pool.get();
  }
  return true;
}

MemoryPool* default_memory_pool(int device) {
  std::lock_guard lock(pools_mutex);
  return device_pools(device).default_pool.get();
}

MemoryPool* current_memory_pool(int device) {
  std::lock_guard lock(pools_mutex);
  return device_pools(device).current;
}

void set_current_memory_pool(int device, MemoryPool* pool) {
  std::lock_guard lock(pools_mutex);
  device_pools(device).current = pool;
}

}  // namespace xcuda::runtime
