// The vectoriser widens the loops over a warp's lanes (warp_lanes.h) and over a block's threads
// along x (block_function.cpp). Meeting an address indexed by a few low bits of the lane or
// thread (`lane & 3`, as mma fragments and their users' code index; a neighbour's
// `(threadIdx.x + 1) % 256`), LLVM makes it an add recurrence by assuming that a recurrence of
// those few bits does not wrap, and checks that at run time. Over 32 lanes, or a block of 256
// threads, it always wraps, so the check always fails and the vector code never runs: a warp
// path falls back to cutting the kernel at every warp exchange, a thread loop runs thread by
// thread (the benchmark suite's barrier_loop, 256 threads wide: 2.0-2.6 ms, and 0.8 with the
// addresses hidden). This pass hides such addresses, those of recurrences of fewer bits than
// a lane or thread index can have, from that assumption (behind a freeze, which changes no
// value), so the vectoriser gathers and scatters them instead. It runs just before the
// vectoriser.
#pragma once

#include <llvm/IR/PassManager.h>

namespace xcuda::ptx::host {

struct NarrowLaneIndices : llvm::PassInfoMixin<NarrowLaneIndices> {
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager& analyses);
};

}  // namespace xcuda::ptx::host
