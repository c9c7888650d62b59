// Device memory kept for reuse. Asking a backend for memory is slow (an mmap on the host, a
// driver call on a GPU), and programs allocate and free the same sizes over and over; a pool
// rounds each request up to a size class and keeps freed blocks of each class for the next
// request. Every block is one whole backend allocation, so whoever ends up holding a block can
// always hand it straight back to the backend.
//
// Two kinds of pool use this: the one behind cuMemAlloc on each device, capped by
// XCUDA_POOL_SIZE, and the CUmemoryPool objects of the stream-ordered allocator, capped by
// their release threshold.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/handles.h"
#include "runtime/status.h"

namespace xcuda::runtime {

class MemoryPool : public std::enable_shared_from_this<MemoryPool> {
 public:
  // `release_threshold`: the most freed memory kept cached; `max_bytes` (0: no limit) the most
  // memory the pool may hold at once, in use or cached.
  MemoryPool(int device, uint64_t release_threshold, uint64_t max_bytes = 0);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  int device() const { return device_; }

  // A block of at least `bytes`.
  Expected<void*> allocate(size_t bytes);
  // Takes back a block `allocate` returned for `bytes`.
  void release(void* block, size_t bytes);
  // Hands cached blocks back to the backend until at most `keep_bytes` stay reserved.
  void trim_to(uint64_t keep_bytes);

  struct Usage {
    uint64_t reserved = 0;  // in use plus cached
    uint64_t reserved_high = 0;
    uint64_t used = 0;
    uint64_t used_high = 0;
  };
  Usage usage() const;
  void reset_reserved_high();
  void reset_used_high();
  uint64_t release_threshold() const;
  void set_release_threshold(uint64_t bytes);

  // The size a request for `bytes` really occupies: four classes per power of two, so at most
  // a quarter of a block is wasted.
  static size_t size_class(size_t bytes);

 private:
  // Size classes go from 256 bytes up, four per power of two: 224 of them cover 64-bit sizes.
  static constexpr size_t class_count = 224;
  // The index of a size class in cached_; class_count for sizes too large to have one.
  static size_t class_index(size_t block_bytes);
  void trim_locked(uint64_t keep_bytes);

  int device_;
  uint64_t max_bytes_;
  mutable std::mutex mutex_;
  uint64_t release_threshold_;                   // guarded by mutex_
  Usage usage_;                                  // guarded by mutex_
  uint64_t cached_bytes_ = 0;                    // guarded by mutex_
  // Freed blocks by class index: a direct look-up, since allocation speed is the pool's point.
  std::array<std::vector<void*>, class_count> cached_;  // guarded by mutex_
};

// The pool behind cuMemAlloc on `device`.
std::shared_ptr<MemoryPool> device_allocation_pool(int device);

// The CUmemoryPool objects the application may name; a handle stays valid until destroyed.
HandleRegistry<MemoryPool>& live_memory_pools();
// A pool lives while a handle names it or an allocation from it is not yet freed (allocations
// hold it through shared_from_this), so destroying a pool still in use is safe.
MemoryPool* create_memory_pool(int device, uint64_t max_bytes);
// False for a pool that is not live or is a device's default pool.
bool destroy_memory_pool(MemoryPool* pool);
// cuDeviceGetDefaultMemPool, and the pool cuMemAllocAsync uses (cuDeviceGet/SetMemPool).
MemoryPool* default_memory_pool(int device);
MemoryPool* current_memory_pool(int device);
void set_current_memory_pool(int device, MemoryPool* pool);

}  // namespace xcuda::runtime
