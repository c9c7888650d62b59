// Warps as vectors. Cutting a kernel at every warp exchange (warp_exchange.h) costs a pass over
// per-thread memory per shuffle; a warp reduction is five of them. Where a block's warps are
// whole, the host target instead runs a region's threads warp by warp, with the 32 lanes of a
// warp as the elements of one vector: LLVM's loop vectoriser turns a loop over a warp's lanes,
// forced to 32 wide, into straight vector code, and maps each exchange to a vector function
// (through its vector-function ABI variants) that this file then rewrites as vector shuffles.
//
// Whether the vectoriser managed is known only after optimisation. Each kernel's block function
// therefore keeps the region-by-region code too, and takes the warp path only while the
// kernel's switch (an external global, so the optimiser cannot assume its value) is on; a
// kernel with an exchange left unvectorised has its switch turned off, and its warp path
// removed.
#pragma once

#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/PassManager.h>

namespace xcuda::ptx::host {

inline constexpr uint32_t warp_lanes = 32;

// Replaces the warp exchanges of `function` (intrinsics::warp_exchange, warp_peer and the warp
// folds of lower/warp_folds.h) with lane exchanges: i32 exchange(i64 offer), the lanes that
// arrived, i64 peer(i32 lane, i64 offer), the offer of `lane`, and i32 fold(i32 participants,
// i64 value, i64 offer), each given the offer of its exchange; and its atomics with calls
// whose vector forms perform them lane by lane (the vectoriser takes no atomics). Returns false
// (leaving the function unusable) when a peer does not follow its exchange in the same basic
// block, or a compare-and-swap's answer is used whole.
bool use_lane_exchanges(llvm::Function& function);

// Whether `instruction` calls a lane exchange.
bool is_lane_exchange(const llvm::Instruction& instruction);

// The switch of block function F is the i8 global named this prefix followed by F's name.
inline constexpr const char* warp_lanes_switch_prefix = "__xcuda_warp_lanes.";

// The i1 switch of the block function named `block_name`, declared on first use.
llvm::Value* load_warp_lanes_switch(llvm::IRBuilder<>& builder, const std::string& block_name);

// The attribute of a block function's fallback (block_function.cpp): its code for the blocks its
// warp path cannot take, those not whole warps wide, in a function of its own, which the
// optimiser spares the passes that copy code (optimizer.cpp). A region of that code between two
// exchanges is a few instructions between passes over per-thread memory, and the fallback's time
// goes to the exchanges. A kernel whose warp path is switched off (below) has its fallback
// optimised fully after all.
inline constexpr const char* warp_lanes_fallback_attribute = "xcuda-warp-lanes-fallback";

// The attribute of a block function with a warp path, whose loops run over warps and their lanes
// and which the optimiser spares non-trivial unswitching (optimizer.cpp).
inline constexpr const char* warp_path_attribute = "xcuda-warp-path";

// Marks the calls `function` makes to functions the inliner would take as not to be inlined
// yet: `function` belongs to a fallback that may never run (unused_fallbacks.h). LaneExchanges
// inlines them should the fallback turn out needed.
void defer_inlining(llvm::Function& function);

// Runs after the vectoriser: rewrites the vector forms of the lane exchanges as shuffles (and a
// fold as a vector comparison or reduction of the warp's offers),
// inlines the atomics' calls, turns off the switch of every block function that kept a scalar
// exchange (removing its warp path and optimising its fallback instead), and gives the scalar
// ones a body that traps (the code that calls them can no longer run).
// `optimization` is what a fallback that becomes its kernel's only path then goes through.
struct LaneExchanges : llvm::PassInfoMixin<LaneExchanges> {
  explicit LaneExchanges(llvm::FunctionPassManager optimization) : optimization_(std::move(optimization)) {}
  llvm::PreservedAnalyses run(llvm::Module& module, llvm::ModuleAnalysisManager& analyses);

 private:
  llvm::FunctionPassManager optimization_;
};

}  // namespace xcuda::ptx::host
