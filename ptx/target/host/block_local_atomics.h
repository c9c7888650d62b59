// Shared memory belongs to one block, and the host runs all threads of a block on one OS
// thread (in turn, region by region or fiber by fiber), so an atomic operation on it can never
// meet another thread halfway: a plain load, operation and store does the same work without the
// locked instruction, which costs tens of cycles (shared-memory histograms are made of them).
// Atomics through .shared addresses are marked (mark_block_local_atomics, host_target.h) while the shared window is still recognisable,
// and become plain operations after vectorisation: earlier, the plain accesses would inherit a
// thread loop's parallel-access tags and could be vectorised across threads that collide.
#pragma once

#include <llvm/IR/PassManager.h>

namespace xcuda::ptx::host {

// Whether mark_block_local_atomics marked the atomic `instruction` as one on shared memory.
bool is_block_local(const llvm::Instruction& instruction);

struct BlockLocalAtomics : llvm::PassInfoMixin<BlockLocalAtomics> {
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager& analyses);
};

}  // namespace xcuda::ptx::host
