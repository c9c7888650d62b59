// PTX gives every NaN that an f32 or f16 operation returns one bit pattern, so the lowering
// follows each such operation with select(isnan(r), canonical NaN, r) (see
// lower/floating_point.h). Where r only flows into operations whose own results are
// canonicalised, or into comparisons, its NaN bits can never be seen: a NaN operand makes
// those operations NaN, and decides a comparison, whatever its bits. This pass drops such
// selects, leaving one wherever a NaN's bits can escape (stores, moves to integer registers,
// conversions, calls), which keeps a compare and blend per operation out of float loops.
#pragma once

#include <llvm/IR/PassManager.h>

namespace xcuda::ptx::host {

struct RedundantNanCanonicalization : llvm::PassInfoMixin<RedundantNanCanonicalization> {
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager& analyses);
};

}  // namespace xcuda::ptx::host
