// PTX computes addresses in 64-bit integer registers, so the lowering loads and stores through
// inttoptr(base + offset). LLVM sees no pointer in such an address: it cannot tell that a
// thread loop's accesses are consecutive, and so leaves the loop unvectorised. This pass
// rewrites inttoptr(base + offset), where only `base` can hold an address (a loaded or
// converted pointer), as a byte GEP of inttoptr(base), which is the same address and gives the
// loop a pointer to reason about.
#pragma once

#include <llvm/IR/PassManager.h>

namespace xcuda::ptx::host {

struct AddressArithmetic : llvm::PassInfoMixin<AddressArithmetic> {
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager& analyses);
};

}  // namespace xcuda::ptx::host
