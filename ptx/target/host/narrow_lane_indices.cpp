#include "target/host/narrow_lane_indices.h"

#include <bit>
#include <optional>
#include <vector>

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Transforms/Utils/LoopUtils.h>

#include "host_abi.h"
#include "target/host/warp_lanes.h"

namespace xcuda::ptx::host {
namespace {

// The bits an index of the loop's vector lanes needs, for the loops the vectoriser widens: a
// warp's lanes, or a block's threads along x (a loop with parallel accesses, block_function.cpp).
std::optional<unsigned> lane_bits(const llvm::Loop& loop) {
  if (!loop.isInnermost()) return std::nullopt;
  std::optional<int> width = llvm::getOptionalIntLoopAttribute(&loop, "llvm.loop.vectorize.width");
  if (width && *width == static_cast<int>(warp_lanes)) return std::countr_zero(warp_lanes);
  if (llvm::findOptionMDForLoop(&loop, "llvm.loop.parallel_accesses") != nullptr) return std::countr_zero(host_abi::max_block_threads);
  return std::nullopt;
}

// Whether the vectoriser could make `pointer` an add recurrence of the loop only by assuming
// that a recurrence of fewer bits than `bits` does not wrap.
bool needs_narrow_assumption(llvm::ScalarEvolution& evolution, llvm::Loop& loop, llvm::Value* pointer, unsigned bits) {
  const llvm::SCEV* address = evolution.getSCEV(pointer);
  if (llvm::isa<llvm::SCEVAddRecExpr>(address) || evolution.isLoopInvariant(address, &loop)) return false;
  llvm::PredicatedScalarEvolution predicated(evolution, loop);
  if (predicated.getAsAddRec(pointer) == nullptr) return false;
  for (const llvm::SCEVPredicate* predicate : llvm::cast<llvm::SCEVUnionPredicate>(predicated.getPredicate()).getPredicates())
    if (const auto* wrap = llvm::dyn_cast<llvm::SCEVWrapPredicate>(predicate);
        wrap != nullptr && wrap->getExpr()->getType()->getScalarSizeInBits() < bits)
      return true;
  return false;
}

}  // namespace

llvm::PreservedAnalyses NarrowLaneIndices::run(llvm::Function& function, llvm::FunctionAnalysisManager& analyses) {
  auto& loops = analyses.getResult<llvm::LoopAnalysis>(function);
  auto& evolution = analyses.getResult<llvm::ScalarEvolutionAnalysis>(function);
  std::vector<std::pair<llvm::Instruction*, unsigned>> hidden;  // an access and its pointer operand's index
  for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
    const std::optional<unsigned> bits = lane_bits(*loop);
    if (!bits) continue;
    for (llvm::BasicBlock* block : loop->blocks())
      for (llvm::Instruction& instruction : *block) {
        unsigned operand = 0;
        if (llvm::isa<llvm::LoadInst>(instruction)) operand = llvm::LoadInst::getPointerOperandIndex();
        else if (llvm::isa<llvm::StoreInst>(instruction)) operand = llvm::StoreInst::getPointerOperandIndex();
        else continue;
        if (needs_narrow_assumption(evolution, *loop, instruction.getOperand(operand), *bits)) hidden.emplace_back(&instruction, operand);
      }
  }
  if (hidden.empty()) return llvm::PreservedAnalyses::all();
  for (auto [access, operand] : hidden) {
    llvm::IRBuilder<> builder(access);
    access->setOperand(operand, builder.CreateFreeze(access->getOperand(operand)));
  }
  llvm::PreservedAnalyses preserved;
  preserved.preserveSet<llvm::CFGAnalyses>();
  return preserved;
}

}  // namespace xcuda::ptx::host
