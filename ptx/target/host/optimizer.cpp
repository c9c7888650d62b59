#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
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

}  // namespace

void optimize(llvm::Module& module, llvm::TargetMachine& machine, int optimization_level) {
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
  llvm::PassBuilder builder(&machine, tuning);
  // After each instruction combination, once the lowering's registers have become values.
  builder.registerPeepholeEPCallback([](llvm::FunctionPassManager& passes, llvm::OptimizationLevel) {
    passes.addPass(RedundantNanCanonicalization());
    passes.addPass(AddressArithmetic());
  });
  builder.registerOptimizerLastEPCallback([](llvm::ModulePassManager& passes, llvm::OptimizationLevel) {
    // Lane exchanges first: they bring back the atomics they held, which may be block-local.
    passes.addPass(LaneExchanges());
    passes.addPass(llvm::createModuleToFunctionPassAdaptor(BlockLocalAtomics()));
  });
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(call_graph);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, call_graph, modules);
  llvm::OptimizationLevel level = optimization_level <= 0   ? llvm::OptimizationLevel::O0
                                  : optimization_level == 1 ? llvm::OptimizationLevel::O1
                                  : optimization_level == 2 ? llvm::OptimizationLevel::O2
                                                            : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager passes = level == llvm::OptimizationLevel::O0 ? builder.buildO0DefaultPipeline(level)
                                                                        : builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, modules);
}

}  // namespace xcuda::ptx::host
