#include "runtime/graph_memory.h"

#include <atomic>
#include <limits>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "runtime/context.h"
#include "runtime/memory.h"

namespace xcuda::runtime {
namespace {

std::mutex allocations_mutex;
// Every graph allocation, by address, guarded by allocations_mutex. An allocated one is also
// held in `holding`, so that it outlives its graphs until something frees it, as the driver
// documents.
std::map<uintptr_t, std::weak_ptr<GraphAllocation>> reserved;
std::unordered_map<uintptr_t, std::shared_ptr<GraphAllocation>> holding;
// reserved.size(), read without the lock: cuMemFree asks about every pointer, and most
// programs have no graph memory at all.
std::atomic<size_t> reserved_count{0};

}  // namespace

MemoryPool& graph_memory_pool(int device) {
  static std::mutex mutex;
  static auto& pools = *new std::map<int, std::shared_ptr<MemoryPool>>;
  std::lock_guard lock(mutex);
  auto& pool = pools[device];
  // Freed graph memory stays reserved until cuDeviceGraphMemTrim.
  if (!pool) pool = std::make_shared<MemoryPool>(device, std::numeric_limits<uint64_t>::max());
  return *pool;
}

GraphAllocation::GraphAllocation(std::shared_ptr<MemoryPool> pool, uintptr_t address, size_t bytes)
    : pool_(std::move(pool)), address_(address), bytes_(bytes) {}

Expected<std::shared_ptr<GraphAllocation>> GraphAllocation::reserve(Context& context,
                                                                    size_t bytes) {
  MemoryPool& pool = graph_memory_pool(context.device());
  Expected<void*> memory = pool.allocate(bytes);
  if (!memory) return memory.error();
  auto address = reinterpret_cast<uintptr_t>(*memory);
  std::shared_ptr<GraphAllocation> allocation(
      new GraphAllocation(pool.shared_from_this(), address, bytes));
  Allocation described{address, bytes, MemoryKind::device, &context};
  described.owned = false;  // freed by the GraphAllocation, never by cuMemFree
  memory_registry().add(std::move(described));
  std::lock_guard lock(allocations_mutex);
  reserved[address] = allocation;
  reserved_count.store(reserved.size(), std::memory_order_relaxed);
  return allocation;
}

GraphAllocation::~GraphAllocation() {
  {
    std::lock_guard lock(allocations_mutex);
    reserved.erase(address_);
    reserved_count.store(reserved.size(), std::memory_order_relaxed);
  }
  memory_registry().remove(address_);
  pool_->release(reinterpret_cast<void*>(address_), bytes_);
}

Status GraphAllocation::allocate() {
  std::lock_guard lock(allocations_mutex);
  auto [where, inserted] = holding.try_emplace(address_, reserved.at(address_).lock());
  if (!inserted)
    return make_error(ErrorCode::invalid_value,
                      fmt::format("the graph allocation at {:#x} from an earlier launch is not "
                                  "freed yet",
                                  address_));
  return {};
}

Status GraphAllocation::free() {
  std::shared_ptr<GraphAllocation> released;  // dropped outside the lock: it may be the last
  std::lock_guard lock(allocations_mutex);
  auto found = holding.find(address_);
  if (found == holding.end())
    return make_error(ErrorCode::invalid_value,
                      fmt::format("the graph allocation at {:#x} is not allocated", address_));
  released = std::move(found->second);
  holding.erase(found);
  return {};
}

bool GraphAllocation::allocated() const {
  std::lock_guard lock(allocations_mutex);
  return holding.contains(address_);
}

std::shared_ptr<GraphAllocation> find_graph_allocation(uintptr_t address) {
  if (reserved_count.load(std::memory_order_relaxed) == 0) return nullptr;
  std::lock_guard lock(allocations_mutex);
  auto found = reserved.find(address);
  return found == reserved.end() ? nullptr : found->second.lock();
}

}  // namespace xcuda::runtime
