// A warp's loop over its lanes (warp_lanes.h) runs exactly 32 times from a whole warp. LLVM's
// vectoriser, meeting an address indexed by a few low bits of the lane (`lane & 3`, as mma
// fragments and their users' code index), makes it an add recurrence by assuming that a
// recurrence of those few bits does not wrap, and checks that at run time. Over 32 lanes it
// always wraps, so the check always fails and the warp's vector code never runs: the kernel
// falls back to cutting itself at every warp exchange. This pass hides such addresses from
// that assumption (behind a freeze, which changes no value), so the vectoriser gathers and
// scatters them instead. It runs just before the vectoriser.
#pragma once

#include <llvm/IR/PassManager.h>

namespace xcuda::ptx::host {

struct NarrowLaneIndices : llvm::PassInfoMixin<NarrowLaneIndices> {
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager& analyses);
};

}  // namespace xcuda::ptx::host
