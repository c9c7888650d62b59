#include "target/host/block_local_accesses.h"

#include <vector>

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/LowerAtomic.h>

#include "lower/intrinsics.h"
#include "target/host/host_target.h"

namespace xcuda::ptx::host {
namespace {

constexpr const char* block_local = "xcuda.block_local";

const llvm::Value* atomic_pointer(const llvm::Instruction& instruction) {
  if (const auto* operation = llvm::dyn_cast<llvm::AtomicRMWInst>(&instruction)) return operation->getPointerOperand();
  if (const auto* exchange = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&instruction)) return exchange->getPointerOperand();
  return nullptr;
}

bool in_shared_window(const llvm::Value* pointer) {
  const auto* call = llvm::dyn_cast<llvm::CallInst>(llvm::getUnderlyingObject(pointer, /*MaxLookup=*/0));
  return call != nullptr && call->getCalledFunction() != nullptr && call->getCalledFunction()->getName() == intrinsics::shared_base;
}

}  // namespace

void mark_block_local_accesses(llvm::Module& module) {
  for (llvm::Function& function : module)
    for (llvm::BasicBlock& block : function)
      for (llvm::Instruction& instruction : block) {
        if (const llvm::Value* pointer = atomic_pointer(instruction); pointer != nullptr && in_shared_window(pointer))
          instruction.setMetadata(block_local, llvm::MDNode::get(module.getContext(), {}));
        if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&instruction); load != nullptr && load->isVolatile() && in_shared_window(load->getPointerOperand()))
          load->setVolatile(false);
        if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&instruction); store != nullptr && store->isVolatile() && in_shared_window(store->getPointerOperand()))
          store->setVolatile(false);
      }
}

bool is_block_local(const llvm::Instruction& instruction) { return instruction.getMetadata(block_local) != nullptr; }

llvm::PreservedAnalyses BlockLocalAtomics::run(llvm::Function& function, llvm::FunctionAnalysisManager&) {
  std::vector<llvm::Instruction*> marked;
  for (llvm::BasicBlock& block : function)
    for (llvm::Instruction& instruction : block)
      if (is_block_local(instruction)) marked.push_back(&instruction);
  for (llvm::Instruction* instruction : marked) {
    if (auto* operation = llvm::dyn_cast<llvm::AtomicRMWInst>(instruction)) llvm::lowerAtomicRMWInst(operation);
    else if (auto* exchange = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(instruction)) llvm::lowerAtomicCmpXchgInst(exchange);
  }
  return marked.empty() ? llvm::PreservedAnalyses::all() : llvm::PreservedAnalyses::none();
}

}  // namespace xcuda::ptx::host
