#include "target/host/thread_uniformity.h"

#include <array>
#include <string_view>

#include <llvm/Analysis/CycleAnalysis.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/Analysis/TargetTransformInfoImpl.h>
#include <llvm/Analysis/UniformityAnalysis.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include "lower/intrinsics.h"

namespace xcuda::ptx::host {
namespace {

// Special registers with one value for the whole block.
bool block_wide_register(std::string_view name) {
  constexpr std::array<std::string_view, 8> names{"ntid", "nctaid", "ctaid", "gridid", "nsmid", "nwarpid", "dynamic_smem_size",
                                                  "total_smem_size"};
  for (std::string_view block_wide : names)
    if (name == block_wide) return true;
  return name.starts_with("envreg");
}

// Where per-thread values come from, for LLVM's uniformity analysis: the thread's own special
// registers (read through the thread context), its local memory, atomics, volatile or atomic
// loads (another thread may change the word between two threads' reads), and any call but the
// pure LLVM intrinsics and block-wide registers.
class ThreadDivergence : public llvm::TargetTransformInfoImplCRTPBase<ThreadDivergence> {
 public:
  ThreadDivergence(const llvm::DataLayout& layout, const llvm::Function& kernel)
      : llvm::TargetTransformInfoImplCRTPBase<ThreadDivergence>(layout), context_(kernel.getArg(0)) {}

  bool hasBranchDivergence(const llvm::Function* = nullptr) const { return true; }
  bool isAlwaysUniform(const llvm::Value*) const { return false; }

  bool isSourceOfDivergence(const llvm::Value* value) const {
    if (llvm::isa<llvm::AllocaInst, llvm::AtomicRMWInst, llvm::AtomicCmpXchgInst>(value)) return true;
    if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(value))
      return !load->isSimple() || llvm::getUnderlyingObject(load->getPointerOperand(), 0) == context_;
    if (const auto* call = llvm::dyn_cast<llvm::CallBase>(value)) {
      const llvm::Function* callee = call->getCalledFunction();
      if (callee == nullptr) return true;
      if (callee->isIntrinsic()) return !call->doesNotAccessMemory();
      if (callee->getName() == intrinsics::shared_base) return false;
      if (callee->getName().starts_with(intrinsics::special_register_prefix))
        return !block_wide_register(intrinsics::parse_special_register(callee->getName()).name);
      return true;
    }
    return false;
  }

 private:
  const llvm::Value* context_;
};

}  // namespace

ThreadUniformity::ThreadUniformity(llvm::Function& kernel) {
  const llvm::DataLayout& layout = kernel.getParent()->getDataLayout();
  llvm::FunctionAnalysisManager analyses;
  analyses.registerPass([] { return llvm::PassInstrumentationAnalysis(); });
  analyses.registerPass([] { return llvm::DominatorTreeAnalysis(); });
  analyses.registerPass([] { return llvm::CycleAnalysis(); });
  analyses.registerPass([&] {
    return llvm::TargetIRAnalysis([&](const llvm::Function& function) { return llvm::TargetTransformInfo(ThreadDivergence(layout, function)); });
  });
  analyses.registerPass([] { return llvm::UniformityInfoAnalysis(); });
  llvm::UniformityInfo& uniformity = analyses.getResult<llvm::UniformityInfoAnalysis>(kernel);
  for (const llvm::BasicBlock& block : kernel)
    if (uniformity.hasDivergentTerminator(block)) divergent_terminators_.insert(block.getTerminator());
  for (llvm::Instruction& instruction : llvm::instructions(kernel)) {
    if (instruction.getType()->isVoidTy() || uniformity.isDivergent(&instruction)) continue;
    // A value made in a loop that threads leave at different trips differs after it.
    bool every_use_uniform = true;
    for (const llvm::Use& use : instruction.uses()) every_use_uniform = every_use_uniform && !uniformity.isDivergentUse(use);
    if (every_use_uniform) uniform_.insert(&instruction);
  }
}

}  // namespace xcuda::ptx::host
