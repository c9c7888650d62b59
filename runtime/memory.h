// Every allocation the application holds, so that frees, pointer queries and copies can be
// checked against what really exists.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "runtime/status.h"

namespace xcuda::runtime {

class Context;
class MemoryPool;

enum class MemoryKind { device, host, managed };

struct Allocation {
  uintptr_t base = 0;
  size_t size = 0;
  MemoryKind kind = MemoryKind::device;
  Context* context = nullptr;
  // False for memory the registry only describes (a module's globals, registered host
  // memory): nobody frees it.
  bool owned = true;
  // What the application asked for: cuMemHostAlloc/cuMemHostRegister flags, or cuMemAllocManaged's.
  unsigned flags = 0;
  // Unique over the process's lifetime (CU_POINTER_ATTRIBUTE_BUFFER_ID); set by the registry.
  uint64_t id = 0;
  // CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, which has no effect here: copies are always synchronous.
  bool sync_memops = false;
  // The pool the memory came from and goes back to; null for memory straight from the backend.
  std::shared_ptr<MemoryPool> pool{};
  // cuMemAdvise and cuMemPrefetchAsync on managed memory, as cuMemRangeGetAttribute reports it.
  // Devices are CUdevice numbers; -1 is the CPU, -2 none.
  struct ManagedAdvice {
    bool read_mostly = false;
    int preferred_location = -2;
    int last_prefetch_location = -2;
    std::set<int> accessed_by;
  };
  ManagedAdvice advice{};
};

class MemoryRegistry {
 public:
  // Returns the id given to the allocation.
  uint64_t add(Allocation allocation);
  // Applies `change` to the allocation containing `address`; false when there is none.
  bool update(uintptr_t address, const std::function<void(Allocation&)>& change);
  // Removes the allocation that starts exactly at `base`.
  std::optional<Allocation> remove(uintptr_t base);
  // The allocation containing `address`, if any.
  std::optional<Allocation> find(uintptr_t address) const;
  // Whether any allocation shares a byte with [base, base + size).
  bool overlaps(uintptr_t base, size_t size) const;
  // Removes and returns everything owned by a context being destroyed.
  std::vector<Allocation> remove_all(const Context* context);

 private:
  Allocation* find_locked(uintptr_t address);

  mutable std::mutex mutex_;
  std::map<uintptr_t, Allocation> allocations_;
  // Nodes of removed allocations, reused by the next add: programs that allocate and free in
  // a loop then never wait on the heap here.
  static constexpr size_t max_spare_nodes = 64;
  std::vector<std::map<uintptr_t, Allocation>::node_type> spare_nodes_;
  uint64_t next_id_ = 1;
};

MemoryRegistry& memory_registry();

}  // namespace xcuda::runtime
