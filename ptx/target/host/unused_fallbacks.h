// Code for blocks the runtime will not launch (CompileOptions::whole_warp_blocks): a kernel
// that kept its warp path (warp_lanes.h) runs every block whose width is whole warps on it, and
// its fallback, the region-by-region code for other widths, would never run. That code cost
// more to optimise and generate than the rest of the kernel: tests/cuda/whole_warps.cu's module
// took 0.52 s with its fallbacks, 0.21 s without (`xcuda compile --target host -j 1
// --time-passes`, optimiser and code generator). The optimiser leaves such fallbacks alone,
// uninlined (optimizer.cpp); this pass, after LaneExchanges has switched off the warp paths that
// did not become vectors (and optimised their fallbacks, now their kernels' only path), gives
// each fallback still marked a body that traps, and marks the block functions that call one.
#pragma once

#include <llvm/IR/PassManager.h>

namespace xcuda::ptx::host {

struct RemoveUnusedFallbacks : llvm::PassInfoMixin<RemoveUnusedFallbacks> {
  llvm::PreservedAnalyses run(llvm::Module& module, llvm::ModuleAnalysisManager& analyses);
};

}  // namespace xcuda::ptx::host
