#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Target/TargetMachine.h>

#include "target/host/address_arithmetic.h"
#include "target/host/block_local_atomics.h"
#include "target/host/host_target.h"
#include "target/host/nan_canonicalization.h"
#include "target/host/warp_lanes.h"

namespace xcuda::ptx::host {
namespace {

// A loop over a warp's lanes that the vectoriser could not widen is foreseen (see
// warp_lanes.h), and LLVM would print why on the program's standard error.
struct QuietVectorisationFailures : llvm::DiagnosticHandler {
  bool handleDiagnostics(const llvm::DiagnosticInfo& diagnostic) override { return llvm::isa<llvm::DiagnosticInfoOptimizationBase>(diagnostic); }
};

// Lane exchanges first: they bring back the atomics they held, which may be block-local.
// LaneExchanges is needed at every level: it switches a kernel's warp path off when its lanes did
// not become vectors.
void add_last_passes(llvm::ModulePassManager& passes) {
  passes.addPass(LaneExchanges());
  passes.addPass(llvm::createModuleToFunctionPassAdaptor(BlockLocalAtomics()));
}

// The first tier: what turns the lowering's registers into values and folds its repetition, and
// nothing that costs time in proportion to loops or to code size beyond that.
llvm::ModulePassManager quick_pipeline() {
  llvm::ModulePassManager passes;
  passes.addPass(llvm::AlwaysInlinerPass());
  llvm::FunctionPassManager function_passes;
  function_passes.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  function_passes.addPass(llvm::EarlyCSEPass());
  function_passes.addPass(llvm::InstCombinePass());
  function_passes.addPass(llvm::SimplifyCFGPass());
  passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(function_passes)));
  add_last_passes(passes);
  return passes;
}

}  // namespace

void optimize(llvm::Module& module, llvm::TargetMachine& machine, int optimization_level,
              const std::atomic<bool>* cancelled) {
  module.getContext().setDiagnosticHandler(std::make_unique<QuietVectorisationFailures>());
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager call_graph;
  llvm::ModuleAnalysisManager modules;
  // Kernels vectorise across threads, in the loops over a block's threads; vectorising the
  // straight-line code of one thread as well took a quarter of all optimisation time on a 1.8 MB
  // libcusparse module and left the benchmark suite no faster.
  llvm::PipelineTuningOptions tuning;
  tuning.SLPVectorization = false;
  llvm::PassInstrumentationCallbacks instrumentation;
  if (cancelled)
    instrumentation.registerShouldRunOptionalPassCallback(
        [cancelled](llvm::StringRef, llvm::Any) { return !cancelled->load(std::memory_order_relaxed); });
  llvm::PassBuilder builder(&machine, tuning, std::nullopt, &instrumentation);
  // After each instruction combination, once the lowering's registers have become values.
  builder.registerPeepholeEPCallback([](llvm::FunctionPassManager& passes, llvm::OptimizationLevel) {
    passes.addPass(RedundantNanCanonicalization());
    passes.addPass(AddressArithmetic());
  });
  builder.registerOptimizerLastEPCallback([](llvm::ModulePassManager& passes, llvm::OptimizationLevel) { add_last_passes(passes); });
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(call_graph);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, call_graph, modules);
  llvm::ModulePassManager passes = optimization_level <= 0   ? builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
                                   : optimization_level == 1 ? quick_pipeline()
                                   : builder.buildPerModuleDefaultPipeline(optimization_level == 2 ? llvm::OptimizationLevel::O2
                                                                                                   : llvm::OptimizationLevel::O3);
  passes.run(module, modules);
}

}  // namespace xcuda::ptx::host
