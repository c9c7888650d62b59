// Which values of a kernel are the same in every thread of the block that computes them: those
// made only from block-wide sources (parameters, %ctaid, %ntid …, constants, memory read at such
// addresses) under control flow that does not depend on the thread. LLVM's uniformity analysis
// does the propagation, through joins and loops; this says where per-thread values start.
// A value crossing a barrier that is uniform needs no per-thread copy for the vectoriser to
// see through it (see barrier_regions.cpp).
#pragma once

#include <unordered_set>

namespace llvm {
class Function;
class Instruction;
}  // namespace llvm

namespace xcuda::ptx::host {

class ThreadUniformity {
 public:
  // `kernel` is a lowered kernel whose synchronisation intrinsics are still calls.
  explicit ThreadUniformity(llvm::Function& kernel);

  // Whether the instruction gives every thread the same value wherever it is used.
  bool is_uniform(const llvm::Instruction& instruction) const { return uniform_.contains(&instruction); }

  // Whether threads that reach the terminator together may leave it for different successors.
  // Terminators made after the analysis are taken as uniform: cutting the kernel adds only
  // unconditional branches, returns, and branches on the resumable function's `together`.
  bool may_diverge(const llvm::Instruction& terminator) const { return divergent_terminators_.contains(&terminator); }

 private:
  std::unordered_set<const llvm::Instruction*> uniform_;
  std::unordered_set<const llvm::Instruction*> divergent_terminators_;
};

}  // namespace xcuda::ptx::host
