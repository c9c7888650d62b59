// Loops the compiler writes over a warp's lanes or a fragment's elements are short, and LLVM
// would unroll them fully, back into the straight-line code they were written to replace.
#pragma once

#include <llvm/IR/Instructions.h>
#include <llvm/IR/Metadata.h>

namespace xcuda::ptx {

// Marks the loop whose back edge is `back_edge` as one LLVM must not unroll.
inline void keep_rolled(llvm::BranchInst* back_edge) {
  llvm::LLVMContext& context = back_edge->getContext();
  llvm::MDNode* loop = llvm::MDNode::getDistinct(context, {nullptr, llvm::MDNode::get(context, llvm::MDString::get(context, "llvm.loop.unroll.disable"))});
  loop->replaceOperandWith(0, loop);
  back_edge->setMetadata(llvm::LLVMContext::MD_loop, loop);
}

}  // namespace xcuda::ptx
