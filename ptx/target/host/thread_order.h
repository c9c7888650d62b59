// The order in which a loop over a block's threads visits them. Threads between two barriers may
// run in any order, and the host uses that freedom against one cost: two workers that run the
// same code at the same time send the cache lines of their global atomics back and forth between
// their cores with every operation (each block of a histogram adds its bins to the same global
// ones). Worker w of W starts such a loop w/W of the way along; the workers then work on
// different lines. Only code without loops is reordered: a thread of it cannot wait for another
// that a different order would run later.
#pragma once

#include <span>

#include <llvm/IR/IRBuilder.h>

namespace xcuda::ptx::host {

// Whether a loop over threads that run `blocks` (with the functions they call) may start
// elsewhere than at the first thread: they have atomics on global memory and no loop.
bool may_rotate(std::span<const llvm::BasicBlock* const> blocks);

// The i32 offset, a multiple of a warp, at which this block's worker starts such loops over
// `width` threads; `frame` is the BlockFrame.
llvm::Value* rotation(llvm::IRBuilder<>& builder, llvm::Value* frame, llvm::Value* width);

}  // namespace xcuda::ptx::host
