#include "runtime/memory.h"

#include <vector>

namespace xcuda::runtime {

void MemoryRegistry::add(const Allocation& allocation) {
  std::lock_guard lock(mutex_);
  allocations_[allocation.base] = allocation;
}

std::optional<Allocation> MemoryRegistry::remove(uintptr_t base) {
  std::lock_guard lock(mutex_);
  auto found = allocations_.find(base);
  if (found == allocations_.end()) return std::nullopt;
  Allocation allocation = found->second;
  allocations_.erase(found);
  return allocation;
}

std::optional<Allocation> MemoryRegistry::find(uintptr_t address) const {
  std::lock_guard lock(mutex_);
  auto after = allocations_.upper_bound(address);
  if (after == allocations_.begin()) return std::nullopt;
  const Allocation& candidate = std::prev(after)->second;
  // A zero-size allocation still owns its base address.
  if (address - candidate.base < std::max<size_t>(candidate.size, 1)) return candidate;
  return std::nullopt;
}

std::vector<Allocation> MemoryRegistry::remove_all(const Context* context) {
  std::lock_guard lock(mutex_);
  std::vector<Allocation> removed;
  for (auto it = allocations_.begin(); it != allocations_.end();) {
    if (it->second.context == context) {
      removed.push_back(it->second);
      it = allocations_.erase(it);
    } else {
      ++it;
    }
  }
  return removed;
}

MemoryRegistry& memory_registry() {
  static auto& instance = *new MemoryRegistry;
  return instance;
}

}  // namespace xcuda::runtime
