#include "target/host/unused_fallbacks.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "target/host/warp_lanes.h"

namespace xcuda::ptx::host {

llvm::PreservedAnalyses RemoveUnusedFallbacks::run(llvm::Module& module, llvm::ModuleAnalysisManager&) {
  bool changed = false;
  for (llvm::Function& function : module) {
    if (function.isDeclaration() || !function.hasFnAttribute(warp_lanes_fallback_attribute)) continue;
    // The block function still calls it, behind the test of the block's width that the runtime
    // guarantees to pass: a launch that would not has the kernel compiled again, whole.
    function.deleteBody();
    function.setLinkage(llvm::GlobalValue::InternalLinkage);
    llvm::IRBuilder<> builder(llvm::BasicBlock::Create(module.getContext(), "entry", &function));
    builder.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
    builder.CreateUnreachable();
    changed = true;
  }
  return changed ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
}

}  // namespace xcuda::ptx::host
