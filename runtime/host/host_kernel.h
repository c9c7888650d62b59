// A kernel of the host device: its description and the native function that runs one block.
// Normally made by the loader from JIT-linked code; tests make one around a C++ function.
#pragma once

#include <utility>

#include "runtime/backend.h"
#include "runtime/host/worker_pool.h"

namespace xcuda::runtime::host {

class HostKernel final : public LoadedKernel {
 public:
  HostKernel(ptx::KernelInfo info, BlockFunction function)
      : info_(std::move(info)), function_(function) {}

  const ptx::KernelInfo& info() const override { return info_; }
  BlockFunction function() const { return function_; }

 private:
  ptx::KernelInfo info_;
  BlockFunction function_;
};

}  // namespace xcuda::runtime::host
