// A kernel of the host device: its description and the native function that runs one block.
// Normally made by the loader from JIT-linked code; tests make one around a C++ function.
#pragma once

#include <atomic>
#include <utility>

#include "runtime/backend.h"
#include "runtime/host/worker_pool.h"

namespace xcuda::runtime::host {

class HostKernel final : public LoadedKernel {
 public:
  HostKernel(ptx::KernelInfo info, BlockFunction function)
      : info_(std::move(info)), function_(function) {}

  const ptx::KernelInfo& info() const override { return info_; }
  // Read again for every claim of blocks, so that a launch picks up adopted code.
  const std::atomic<BlockFunction>& function() const { return function_; }

  bool adopt_code(const LoadedKernel& better) override {
    auto* host = dynamic_cast<const HostKernel*>(&better);
    // A block's frame is sized from the description, so the code must expect the same one.
    if (!host || host->info_.host_stack_bytes_per_thread != info_.host_stack_bytes_per_thread ||
        host->info_.static_shared_bytes != info_.static_shared_bytes ||
        host->info_.parameter_buffer_size != info_.parameter_buffer_size)
      return false;
    function_.store(host->function_.load(std::memory_order_acquire), std::memory_order_release);
    return true;
  }

 private:
  ptx::KernelInfo info_;
  std::atomic<BlockFunction> function_;
};

}  // namespace xcuda::runtime::host
