// Shared memory belongs to one block, and the host runs all threads of a block on one OS
// thread (in turn, region by region or fiber by fiber), so an atomic operation on it can never
// meet another thread halfway: a plain load, operation and store does the same work without the
// locked instruction, which costs tens of cycles (shared-memory histograms are made of them).
// Atomics through .shared addresses are marked (mark_block_local_accesses, host_target.h) while the shared window is still recognisable,
// and become plain operations after vectorisation: earlier, the plain accesses would inherit a
// thread loop's parallel-access tags and could be vectorised across threads that collide.
// For the same reason a .volatile load or store of shared memory need not be one for LLVM, which
// vectorises no loop with a volatile access: it becomes plain at once. Loops over threads
// that load and store each thread's own words keep them apart, and where threads meet at one
// word the vector of their accesses is one of the orders in which a GPU's threads may make them.
// Volatile, a libcusparse reduction (cusparseIreduce_domino_core) lost its warp path, whose lanes'
// loop did not vectorise, and compiled both paths in 98-100 ms of CPU instead of 40-41 (`perf
// stat -r 3 xcuda compile --target host -j 1 --whole-warp-blocks`); a libcusparse scan module in
// 364 ms instead of 110. Of 141 modules (the nvcc corpus's 51 sm_90 ones and 90 of libcublas and
// libcusparse under 60 KB) 15 objects changed: most compiled faster, two csrgeam modules 21-28%
// slower, their loops vectorised now.
#pragma once

#include <llvm/IR/PassManager.h>

namespace xcuda::ptx::host {

// Whether mark_block_local_accesses marked the atomic `instruction` as one on shared memory.
bool is_block_local(const llvm::Instruction& instruction);

struct BlockLocalAtomics : llvm::PassInfoMixin<BlockLocalAtomics> {
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager& analyses);
};

}  // namespace xcuda::ptx::host
