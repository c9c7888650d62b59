#include "target/host/unused_fallbacks.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include "target/host/host_target.h"
#include "target/host/warp_lanes.h"

namespace xcuda::ptx::host {

llvm::PreservedAnalyses RemoveUnusedFallbacks::run(llvm::Module& module, llvm::ModuleAnalysisManager&) {
  std::vector<llvm::Function*> unused;
  for (llvm::Function& function : module)
    if (!function.isDeclaration() && function.hasFnAttribute(warp_lanes_fallback_attribute)) unused.push_back(&function);
  for (llvm::Function* function : unused) {
    for (llvm::User* user : function->users())
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(user)) call->getFunction()->addFnAttr(whole_warps_only_attribute);
    function->deleteBody();
    function->setLinkage(llvm::GlobalValue::InternalLinkage);
    llvm::IRBuilder<> builder(llvm::BasicBlock::Create(module.getContext(), "entry", function));
    builder.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
    builder.CreateUnreachable();
  }
  // A block function still calls its fallback, behind the test of the block's width that the
  // runtime guarantees to pass; the regions that only the fallback called go.
  for (llvm::Function* function : unused)
    if (function->use_empty()) function->eraseFromParent();
  return unused.empty() ? llvm::PreservedAnalyses::all() : llvm::PreservedAnalyses::none();
}

}  // namespace xcuda::ptx::host
