// Graph memory: what allocation nodes allocate (cuGraphAddMemAllocNode, and cuMemAllocAsync
// while a stream captures). The address is fixed when the node is made and stays the same at
// every launch, so each allocation reserves its memory for as long as a graph holds the node;
// launches only move it between allocated and free. The memory comes from a pool per device
// that keeps freed memory until cuDeviceGraphMemTrim, as the driver's graph memory does, and
// whose usage cuDeviceGetGraphMemAttribute reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "runtime/memory_pool.h"
#include "runtime/status.h"

namespace xcuda::runtime {

class Context;
class Graph;

class GraphAllocation {
 public:
  // Reserves `bytes` of the device's graph memory, described to the memory registry (so that
  // copies and kernels may name it) as device memory of `context`.
  static Expected<std::shared_ptr<GraphAllocation>> reserve(Context& context, size_t bytes);
  ~GraphAllocation();
  GraphAllocation(const GraphAllocation&) = delete;
  GraphAllocation& operator=(const GraphAllocation&) = delete;

  uintptr_t address() const { return address_; }
  size_t bytes() const { return bytes_; }

  // A launch reached the allocation node: invalid_value while a previous launch's allocation
  // is still not freed.
  Status allocate();
  // A free node, cuMemFree or cuMemFreeAsync: invalid_value when not allocated.
  Status free();
  bool allocated() const;

  // The graph holding the allocation node, and where free nodes for the allocation are: the
  // driver allows them in that graph once, or in other graphs, but not both.
  const Graph* owner = nullptr;
  bool freed_in_owner = false;
  bool freed_elsewhere = false;

 private:
  GraphAllocation(std::shared_ptr<MemoryPool> pool, uintptr_t address, size_t bytes);

  std::shared_ptr<MemoryPool> pool_;
  uintptr_t address_;
  size_t bytes_;
};

// The graph allocation starting at `address`, or null.
std::shared_ptr<GraphAllocation> find_graph_allocation(uintptr_t address);

// The pool graph memory of `device` comes from.
MemoryPool& graph_memory_pool(int device);

}  // namespace xcuda::runtime
