// Loops the compiler writes, as opposed to the kernel's own: over a warp's lanes or a fragment's
// elements, short, which LLVM would unroll fully, back into the straight-line code they were
// written to replace; and on the host, over a block's threads (target/host/block_function.cpp).
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Metadata.h>

#include <functional>
#include <vector>

namespace xcuda::ptx {

// The option (in its llvm.loop metadata) of every loop the compiler writes, over a warp's lanes,
// a fragment's elements or a block's threads, which the host's optimiser tells apart from the
// kernel's own loops (optimizer.cpp).
inline constexpr const char* compiler_loop_option = "xcuda.loop.compiler";

// A loop id for a loop the compiler writes, with LLVM's loop `options`.
inline llvm::MDNode* compiler_loop_id(llvm::LLVMContext& context, std::vector<llvm::Metadata*> options = {}) {
  options.insert(options.begin(), {nullptr, llvm::MDNode::get(context, llvm::MDString::get(context, compiler_loop_option))});
  llvm::MDNode* loop = llvm::MDNode::getDistinct(context, options);
  loop->replaceOperandWith(0, loop);
  return loop;
}

// Marks the loop whose back edge is `back_edge` as one LLVM must not unroll, nor, without
// `vectorise`, vectorise.
inline void keep_rolled(llvm::BranchInst* back_edge, bool vectorise = true) {
  llvm::LLVMContext& context = back_edge->getContext();
  std::vector<llvm::Metadata*> options{llvm::MDNode::get(context, llvm::MDString::get(context, "llvm.loop.unroll.disable"))};
  if (!vectorise)
    options.push_back(llvm::MDNode::get(context, {llvm::MDString::get(context, "llvm.loop.vectorize.enable"),
                                                  llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(context))}));
  back_edge->setMetadata(llvm::LLVMContext::MD_loop, compiler_loop_id(context, std::move(options)));
}

// for (i32 index = 0; index < count; ++index) body(index), kept rolled, at the builder's place,
// which it leaves after the loop. `count` is at least 1.
//
// Nor vectorised: one thread's walk over a fragment's elements or a warp's lanes reads and writes
// through tables of places, which vectors turn into element-by-element gathers and scatters. Of
// the 51 sm_90 modules of the nvcc corpus only tests/cuda/sparse_mma.cu's object changed: its
// mma.sp functions, 154 -> 97 KB, compiled in 360-375 ms of CPU instead of 548-562 (`perf stat
// -r 3 xcuda compile --target host --whole-warp-blocks -j 1`, two alternations). A loop of 16
// m16n8k16 .f16 mma.sp over 256 blocks of 128 threads ran in 77-81 ms either way, with the same
// sums.
inline void counted_loop(llvm::IRBuilder<>& builder, llvm::Value* count, const std::function<void(llvm::Value* index)>& body) {
  llvm::Function* function = builder.GetInsertBlock()->getParent();
  llvm::BasicBlock* before = builder.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(builder.getContext(), "loop", function);
  auto* done = llvm::BasicBlock::Create(builder.getContext(), "loop.done", function);
  builder.CreateBr(loop);
  builder.SetInsertPoint(loop);
  llvm::PHINode* index = builder.CreatePHI(builder.getInt32Ty(), 2);
  index->addIncoming(builder.getInt32(0), before);
  body(index);
  llvm::Value* next = builder.CreateAdd(index, builder.getInt32(1));
  index->addIncoming(next, builder.GetInsertBlock());
  keep_rolled(builder.CreateCondBr(builder.CreateICmpULT(next, count), loop, done), /*vectorise=*/false);
  builder.SetInsertPoint(done);
}

}  // namespace xcuda::ptx
