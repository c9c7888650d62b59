// Every allocation the application holds, so that frees, pointer queries and copies can be
// checked against what really exists.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/status.h"

namespace xcuda::runtime {

class Context;

enum class MemoryKind { device, host, managed };

struct Allocation {
  uintptr_t base = 0;
  size_t size = 0;
  MemoryKind kind = MemoryKind::device;
  Context* context = nullptr;
  // False for memory the registry only describes (a module's globals): nobody frees it.
  bool owned = true;
};

class MemoryRegistry {
 public:
  void add(const Allocation& allocation);
  // Removes the allocation that starts exactly at `base`.
  std::optional<Allocation> remove(uintptr_t base);
  // The allocation containing `address`, if any.
  std::optional<Allocation> find(uintptr_t address) const;
  // Removes and returns everything owned by a context being destroyed.
  std::vector<Allocation> remove_all(const Context* context);

 private:
  mutable std::mutex mutex_;
  std::map<uintptr_t, Allocation> allocations_;
};

MemoryRegistry& memory_registry();

}  // namespace xcuda::runtime
