#include "runtime/memory.h"

#include <algorithm>
#include <vector>

#include "runtime/memory_pool.h"

namespace xcuda::runtime {

uint64_t MemoryRegistry::add(Allocation allocation) {
  std::lock_guard lock(mutex_);
  allocation.id = next_id_++;
  uint64_t id = allocation.id;
  if (spare_nodes_.empty()) {
    allocations_[allocation.base] = std::move(allocation);
    return id;
  }
  auto node = std::move(spare_nodes_.back());
  spare_nodes_.pop_back();
  node.key() = allocation.base;
  node.mapped() = std::move(allocation);
  auto inserted = allocations_.insert(std::move(node));
  if (!inserted.inserted) inserted.position->second = std::move(inserted.node.mapped());
  return id;
}

bool MemoryRegistry::update(uintptr_t address, const std::function<void(Allocation&)>& change) {
  std::lock_guard lock(mutex_);
  Allocation* found = find_locked(address);
  if (!found) return false;
  change(*found);
  return true;
}

std::optional<Allocation> MemoryRegistry::remove(uintptr_t base) {
  std::lock_guard lock(mutex_);
  auto node = allocations_.extract(base);
  if (!node) return std::nullopt;
  Allocation allocation = std::move(node.mapped());
  if (spare_nodes_.size() < max_spare_nodes) spare_nodes_.push_back(std::move(node));
  return allocation;
}

std::optional<Allocation> MemoryRegistry::find(uintptr_t address) const {
  std::lock_guard lock(mutex_);
  const Allocation* found = const_cast<MemoryRegistry*>(this)->find_locked(address);
  if (!found) return std::nullopt;
  return *found;
}

bool MemoryRegistry::overlaps(uintptr_t base, size_t size) const {
  std::lock_guard lock(mutex_);
  if (const_cast<MemoryRegistry*>(this)->find_locked(base)) return true;
  auto next = allocations_.upper_bound(base);
  return next != allocations_.end() && next->first - base < size;
}

Allocation* MemoryRegistry::find_locked(uintptr_t address) {
  auto after = allocations_.upper_bound(address);
  if (after == allocations_.begin()) return nullptr;
  Allocation& candidate = std::prev(after)->second;
  // A zero-size allocation still owns its base address.
  if (address - candidate.base < std::max<size_t>(candidate.size, 1)) return &candidate;
  return nullptr;
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
