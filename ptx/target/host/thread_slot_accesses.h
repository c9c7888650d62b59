// A loop over a block's threads (block_function.cpp) tags each access of the kernel's code with
// its access group, which tells the vectoriser that no thread's access depends on another's. LLVM
// drops the tag where it makes one access of two: instruction combining merges a slot's stores on
// both ways of a branch into one store after it, untagged. The vectoriser then has to prove that
// store independent of the loop's other accesses, cannot ("cannot identify array bounds"), and
// leaves the loop scalar; on a warp's lanes that switches the kernel's warp path off. This pass
// tags again, just before the vectoriser, what can only be one thread's own: an access in such a
// loop to the block's storage, where each slot holds a value for each thread side by side.
// libcusparse's block sorts (sortI16_by_key_local_core and the like) lost their warp paths that
// way: their module compiled both paths in 0.59-0.61 s of CPU, and with the tags back its warp
// path alone in 0.13 s (`perf stat -r 2 xcuda compile --target host -j 1 --whole-warp-blocks`),
// its object 18 KB instead of 52. Of 141 modules (the nvcc corpus's 51 sm_90 ones and 90 of
// libcublas and libcusparse under 60 KB) 24 objects changed, the benchmark suite's not; the 90
// compiled in 3.72 times ptxas's CPU time instead of 4.22 (tests/bench/compile_speed/run
// --small-library-modules).
#pragma once

#include <llvm/IR/Instructions.h>
#include <llvm/IR/PassManager.h>

namespace xcuda::ptx::host {

// Marks `storage` as the block's storage of per-thread slots (barrier_regions.h's StorageLayout).
void mark_thread_storage(llvm::AllocaInst& storage);

struct ThreadSlotAccesses : llvm::PassInfoMixin<ThreadSlotAccesses> {
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager& analyses);
};

}  // namespace xcuda::ptx::host
