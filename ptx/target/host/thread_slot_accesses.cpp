#include "target/host/thread_slot_accesses.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/Transforms/Utils/LoopUtils.h>

namespace xcuda::ptx::host {
namespace {

constexpr const char* thread_storage = "xcuda.thread_storage";

bool in_thread_storage(const llvm::Value* pointer) {
  const auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(llvm::getUnderlyingObject(pointer, /*MaxLookup=*/0));
  return alloca != nullptr && alloca->getMetadata(thread_storage) != nullptr;
}

}  // namespace

void mark_thread_storage(llvm::AllocaInst& storage) { storage.setMetadata(thread_storage, llvm::MDNode::get(storage.getContext(), {})); }

llvm::PreservedAnalyses ThreadSlotAccesses::run(llvm::Function& function, llvm::FunctionAnalysisManager& analyses) {
  bool changed = false;
  for (llvm::Loop* loop : analyses.getResult<llvm::LoopAnalysis>(function).getLoopsInPreorder()) {
    const llvm::MDNode* parallel = llvm::findOptionMDForLoop(loop, "llvm.loop.parallel_accesses");
    // One group for the loop's own accesses (block_function.cpp's ThreadLoopAccesses).
    if (parallel == nullptr || parallel->getNumOperands() != 2) continue;
    auto* group = llvm::cast<llvm::MDNode>(parallel->getOperand(1));
    for (llvm::BasicBlock* block : loop->blocks())
      for (llvm::Instruction& instruction : *block) {
        const llvm::Value* pointer = llvm::getLoadStorePointerOperand(&instruction);
        if (pointer == nullptr || instruction.hasMetadata(llvm::LLVMContext::MD_access_group) || !in_thread_storage(pointer)) continue;
        instruction.setMetadata(llvm::LLVMContext::MD_access_group, group);
        changed = true;
      }
  }
  return changed ? llvm::PreservedAnalyses::allInSet<llvm::CFGAnalyses>() : llvm::PreservedAnalyses::all();
}

}  // namespace xcuda::ptx::host
