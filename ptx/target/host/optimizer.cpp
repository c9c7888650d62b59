#include <functional>

#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/DeadStoreElimination.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/IndVarSimplify.h>
#include <llvm/Transforms/Scalar/InstSimplifyPass.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopDeletion.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/LoopRotation.h>
#include <llvm/Transforms/Scalar/LoopUnrollPass.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimpleLoopUnswitch.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/LoopUtils.h>
#include <llvm/Transforms/Vectorize/LoopVectorize.h>
#include <llvm/Target/TargetMachine.h>

#include "lower/compiler_loops.h"
#include "target/host/address_arithmetic.h"
#include "target/host/block_local_accesses.h"
#include "target/host/host_target.h"
#include "target/host/nan_canonicalization.h"
#include "target/host/narrow_lane_indices.h"
#include "target/host/thread_slot_accesses.h"
#include "target/host/unused_fallbacks.h"
#include "target/host/warp_lanes.h"

namespace xcuda::ptx::host {
namespace {

// A loop over a warp's lanes that the vectoriser could not widen is foreseen (see
// warp_lanes.h), and LLVM would print why on the program's standard error.
struct QuietVectorisationFailures : llvm::DiagnosticHandler {
  bool handleDiagnostics(const llvm::DiagnosticInfo& diagnostic) override { return llvm::isa<llvm::DiagnosticInfoOptimizationBase>(diagnostic); }
};

// Our own clean-ups, after each instruction combination: they need the lowering's registers to
// have become values.
void add_cleanups(llvm::FunctionPassManager& passes) {
  passes.addPass(RedundantNanCanonicalization());
  passes.addPass(AddressArithmetic());
}

void combine_instructions(llvm::FunctionPassManager& passes) {
  passes.addPass(llvm::InstCombinePass());
  add_cleanups(passes);
}

// What turns the lowering's registers into values and folds its repetition, and nothing that
// costs time in proportion to loops or to code size beyond that. Instructions are simplified
// here, not combined: combining took half of the first tier's optimiser (-O1, -j 1: 0.032 ->
// 0.016 s on tests/cuda/mma_numerics.cu's module, 0.056 -> 0.033 s on whole_warps.cu's), and at
// -O3 the combining after inlining does it anyway (whole_warps 0.109 -> 0.094 s). The benchmark
// suite's first-tier code ran from 27% faster (mandelbrot) to 22% slower (reduce_shared); its
// optimised code no slower (nbody 19 -> 17.5 ms).
llvm::FunctionPassManager simplification() {
  llvm::FunctionPassManager passes;
  passes.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  passes.addPass(llvm::EarlyCSEPass());
  passes.addPass(llvm::InstSimplifyPass());
  add_cleanups(passes);
  passes.addPass(llvm::SimplifyCFGPass());
  return passes;
}

// The vectoriser widens a loop over a block's threads once: without interleaving (a main loop
// taking four vectors of threads a step) and without a vectorised epilogue (a loop 8 lanes wide
// after the main loop's 16; LLVM's option, which machine.cpp sets), each one more copy of a
// region's body. Without them the barrier kernels of the nvcc corpus compiled in 15-25% less CPU
// time (`perf stat -r 3 xcuda compile --target host -j 1 --whole-warp-blocks`: guarded_regions.cu
// 166 -> 125 ms, block_barriers.cu 339 -> 253, the benchmark suite's module 254 -> 206 and its
// text 42 -> 27 KB), and the benchmark suite's first launches, which wait for that compile, took
// up to a third less time (block_scan 39 -> 30 ms, barrier_loop 79 -> 53); its kernels ran as
// fast (two runs of five alternations: every kernel within the noise of reduce_shuffle, whose
// object did not change).
const llvm::LoopVectorizeOptions vectorize_once = llvm::LoopVectorizeOptions().setInterleaveOnlyWhenForced(true);

template <typename... Passes>
auto loop_passes(bool memory_ssa, Passes&&... passes) {
  llvm::LoopPassManager manager;
  (manager.addPass(std::forward<Passes>(passes)), ...);
  return llvm::createFunctionToLoopPassAdaptor(std::move(manager), memory_ssa);
}

// IndVarSimplify on the kernel's own loops only, not on those the compiler writes (see
// compiler_loop_option): loops over a block's threads count in 32 bits without wrapping already,
// and their counters have many users, every per-thread slot's address and every lane's exchange
// arithmetic, for each of which the pass asked ScalarEvolution about the loops' guarding
// conditions: a quarter of the optimiser's time on kernels with warp collectives. Without it on
// the loops along x, tests/cuda/whole_warps.cu's module compiled in 135-138 ms of CPU instead of
// 150-157, mma_numerics.cu's in 139-144 instead of 149-153 (`perf stat -r 5 xcuda compile
// --target host --whole-warp-blocks`); a 1.8 MB libcusparse module took as long, and the
// benchmark suite's kernels ran as fast (25 alternating runs of build/bench/bench_cuda). Without
// it on those along y and z and over warps too, whose counters' users are the same,
// whole_warps.cu's kernels rotations and block_sum took 39-40 and 25-26 ms instead of 43 and 28,
// mma_numerics.cu's m16n8k16 kernel 33 instead of 34 (`perf stat -r 5 ... -j 1 --kernel`, three
// alternations). Without it on the short loops over lanes and over a fragment's elements,
// mma_numerics.cu's module 128-129 ms instead of 137-138; an m16n8k16 mma.sync loop ran as fast
// (57-59 ms, four alternations), as did the benchmark suite (eight).
struct IndVarSimplifyKernelLoops : llvm::PassInfoMixin<IndVarSimplifyKernelLoops> {
  llvm::PreservedAnalyses run(llvm::Loop& loop, llvm::LoopAnalysisManager& analyses, llvm::LoopStandardAnalysisResults& results,
                              llvm::LPMUpdater& updater) {
    if (llvm::findOptionMDForLoop(&loop, compiler_loop_option) != nullptr) return llvm::PreservedAnalyses::all();
    return simplify.run(loop, analyses, results, updater);
  }
  llvm::IndVarSimplifyPass simplify;
};

// Lane exchanges first: they bring back the atomics they held, which may be block-local.
// LaneExchanges is needed at every level: it switches a kernel's warp path off when its lanes did
// not become vectors.
void add_last_passes(llvm::ModulePassManager& passes, llvm::FunctionPassManager fallback_optimization) {
  passes.addPass(LaneExchanges(std::move(fallback_optimization)));
  passes.addPass(llvm::createModuleToFunctionPassAdaptor(BlockLocalAtomics()));
}

// The first tier. Simplified once before the thread loops copy a kernel's regions, the copies
// are smaller: -O1 -j 1 took 39 -> 33.5 ms of CPU on tests/cuda/mma_numerics.cu's module, 67 -> 62
// on whole_warps.cu's, 0.92 -> 0.83 s on a 1.8 MB libcusparse module; the benchmark suite's
// first-tier code ran as fast.
llvm::ModulePassManager quick_pipeline() {
  llvm::ModulePassManager passes;
  passes.addPass(llvm::createModuleToFunctionPassAdaptor(simplification()));
  passes.addPass(llvm::AlwaysInlinerPass());
  passes.addPass(llvm::createModuleToFunctionPassAdaptor(simplification()));
  add_last_passes(passes, llvm::FunctionPassManager());
  return passes;
}

// What a function's loops run over, for the passes that copy code (below): a block's threads, or
// (warp_lanes.h) warps and their lanes, or the threads of a warp path's fallback.
enum class Path { threads, warps, fallback };

// -O2 and -O3: LLVM's -O3 list cut down to what PTX from nvcc still needs. nvcc has inlined,
// unrolled and shared common expressions already; what is new is the host target's own code,
// loops over a block's threads (block_function.cpp) that inline a kernel's body once per region.
// Those loops want their uniform code hoisted and their uniform branches taken out, the loop
// over a tid == 0 test peeled down to one thread, and vectorising across threads. The full -O3
// list took twice the time for no faster kernels in the benchmark suite (tests/bench).
//
// A warp path's fallback (see warp_lanes.h) goes without the passes that copy code: non-trivial
// unswitching, unrolling and the vectoriser. On tests/cuda/whole_warps.cu's module that took
// the optimiser and code generator from 1.15 to 0.78 s; the benchmark suite's reduce_shuffle,
// forced onto its fallback, ran in 36-42 ms instead of 24-25 (30 ms with them; its warp path:
// 0.8 ms). A warp path goes without non-trivial unswitching, which copies every loop around a
// uniform branch to spare a test made once per warp rather than once per thread. In
// tests/cuda/whole_warps.cu's rotations kernel, whose loop nvcc unrolled four times, the tests
// of its trip count made four copies of the loops over warps; without them the kernel compiled
// in 30 ms of CPU instead of 34-35.5 (`perf stat -r 10 xcuda compile --target host -j 1
// --whole-warp-blocks --kernel`, two alternations), the module in 99.5-101.5 instead of 103-105,
// and it ran faster: 200 rotations over 65536 threads in 0.55-0.95 ms instead of 1.3-1.6 (the
// same checksum). No other object of the 46 sm_90 modules of the nvcc corpus changed, for blocks
// of whole warps or of any width.
llvm::FunctionPassManager optimization(Path path) {
  const bool fallback = path == Path::fallback;
  // The simplification again, in -O3's order and with MemorySSA: each inlined copy now sees its
  // region's resume point as a constant, and per-thread stores followed by loads of them.
  llvm::FunctionPassManager function;
  function.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  function.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
  function.addPass(llvm::SimplifyCFGPass());
  combine_instructions(function);
  // One LICM, before the rotation: a second after it, as -O3 has, left every object the same (the
  // 46 sm_90 modules of the nvcc corpus, for blocks of any width and of whole warps; a 1.8 MB
  // libcusparse module) and took 1% of the instructions compiling tests/cuda/whole_warps.cu.
  function.addPass(loop_passes(/*memory_ssa=*/true, llvm::LICMPass(llvm::LICMOptions()), llvm::LoopRotatePass(),
                               llvm::SimpleLoopUnswitchPass(/*NonTrivial=*/path == Path::threads)));
  function.addPass(llvm::SimplifyCFGPass());
  function.addPass(loop_passes(/*memory_ssa=*/false, IndVarSimplifyKernelLoops(), llvm::LoopDeletionPass(), llvm::LoopFullUnrollPass(3)));
  function.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  // Where -O3 has GVN: it took a quarter of the optimiser's time on a 1.8 MB libcusparse module.
  // With its partial-redundancy elimination off, GVN left that module's object byte for byte as
  // this pass does; with it on, the benchmark suite was no faster.
  function.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
  // No instruction combining here, where -O3 has it: the combining before and after the
  // vectoriser does its work. Without it tests/cuda/whole_warps.cu's module compiled in 2.7% fewer
  // instructions, mma_numerics.cu's 2.0%, the benchmark suite's 1.4% (valgrind, for this
  // machine's AVX-512); 43 of the nvcc corpus's 51 sm_90 modules had the same object and the
  // others' differed by under 1% in size; a 1.8 MB libcusparse module compiled in as much time,
  // and the benchmark suite's kernels ran as fast (five alternations).
  add_cleanups(function);
  function.addPass(llvm::DSEPass());
  function.addPass(loop_passes(/*memory_ssa=*/true, llvm::LICMPass(llvm::LICMOptions())));
  function.addPass(llvm::SimplifyCFGPass());
  // Peeling leaves loops that do nothing; deleting them keeps the vectoriser off them.
  function.addPass(loop_passes(/*memory_ssa=*/false, llvm::LoopRotatePass(), llvm::LoopDeletionPass()));
  function.addPass(ThreadSlotAccesses());
  function.addPass(NarrowLaneIndices());
  if (!fallback) function.addPass(llvm::LoopVectorizePass(vectorize_once));
  combine_instructions(function);
  function.addPass(llvm::SimplifyCFGPass());
  // No unrolling after the vectoriser, where -O3 unrolls: nvcc has unrolled the kernel's loops,
  // the full unrolling above takes the short loops the lowering writes, and what was left were the
  // block function's loops over threads and their vector forms. (Unrolled at run time too, each
  // loop whose trip count only the launch tells, the loop over a block's y with every region's
  // loop over x in it, became two copies and a remainder.) Without it the benchmark suite's
  // module compiled in 6.0% fewer instructions, tests/cuda/mma_numerics.cu's 2.6%,
  // whole_warps.cu's 1.8% (valgrind, for this machine's AVX-512); 42 of the nvcc corpus's 51
  // sm_90 modules had the same object, the others mostly a smaller one (half_accumulators.cu 87
  // -> 77 KB), a 1.8 MB libcusparse module the same; of the benchmark suite's kernels only
  // reduce_shared changed, and it ran as fast (1.08 ms either way, six alternations).
  function.addPass(loop_passes(/*memory_ssa=*/true, llvm::LICMPass(llvm::LICMOptions())));
  function.addPass(llvm::SimplifyCFGPass());
  return function;
}

// A body the always-inliner copied everywhere it could, kept only for the calls that a fallback
// which may never run deferred (block_function.cpp): LaneExchanges inlines it there, then
// optimises the fallback, should the fallback turn out needed, so optimising it alone is work
// thrown away. On tests/cuda/whole_warps.cu's module these were the folds of its votes, matches
// and reductions: 94.5-98.4 ms of CPU instead of 99.2-101.0 (`perf stat -r 15 xcuda compile
// --target host -j 1 --whole-warp-blocks`, three alternations), the same object.
bool only_deferred_calls(const llvm::Function& function) {
  if (!function.hasFnAttribute(llvm::Attribute::AlwaysInline) || function.use_empty()) return false;
  return llvm::all_of(function.users(), [](const llvm::User* user) {
    const auto* call = llvm::dyn_cast<llvm::CallInst>(user);
    return call != nullptr && call->isNoInline();
  });
}

// Each function through the passes `passes` gives for its path, but a warp path's fallback that
// may never run (unused_fallbacks.h) not at all: LaneExchanges optimises such a fallback if it
// turns out needed; and the copy of a kernel's regions for threads standing apart
// (block_function.cpp) through the simplification alone.
struct EachFunction : llvm::PassInfoMixin<EachFunction> {
  EachFunction(const std::function<llvm::FunctionPassManager(Path)>& passes, bool whole_warp_blocks)
      : threads(passes(Path::threads)), warps(passes(Path::warps)), fallback(passes(Path::fallback)), apart(simplification()),
        whole_warp_blocks(whole_warp_blocks) {}
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager& analyses) {
    if (function.hasFnAttribute(warp_lanes_fallback_attribute))
      return whole_warp_blocks ? llvm::PreservedAnalyses::all() : fallback.run(function, analyses);
    if (only_deferred_calls(function)) return llvm::PreservedAnalyses::all();
    if (function.hasFnAttribute(threads_apart_attribute)) return apart.run(function, analyses);
    return (function.hasFnAttribute(warp_path_attribute) ? warps : threads).run(function, analyses);
  }
  llvm::FunctionPassManager threads, warps, fallback, apart;
  bool whole_warp_blocks;
};

// A fallback that may never run goes without the simplification and the inlining too
// (block_function.cpp defers its calls): tests/cuda/whole_warps.cu's module compiled in 115-117
// ms of CPU instead of 122-125 (`perf stat -r 5 xcuda compile --target host -j 1
// --whole-warp-blocks`, three alternations), 7.6% fewer instructions (valgrind), the same object,
// as were the objects of the 46 sm_90 modules of the nvcc corpus.
llvm::ModulePassManager optimizing_pipeline(bool whole_warp_blocks) {
  llvm::ModulePassManager passes;
  // Each function once, before the thread loops make copies of it.
  passes.addPass(llvm::createModuleToFunctionPassAdaptor(EachFunction([](Path) { return simplification(); }, whole_warp_blocks)));
  passes.addPass(llvm::AlwaysInlinerPass());
  passes.addPass(llvm::createModuleToFunctionPassAdaptor(EachFunction(optimization, whole_warp_blocks)));
  // Functions the thread loops inlined everywhere still call the target's intrinsics, which only
  // the block functions' code defines.
  passes.addPass(llvm::GlobalDCEPass());
  add_last_passes(passes, optimization(Path::threads));
  if (whole_warp_blocks) {
    passes.addPass(RemoveUnusedFallbacks());
    // What only the removed fallbacks called.
    passes.addPass(llvm::GlobalDCEPass());
  }
  return passes;
}

}  // namespace

void optimize(llvm::Module& module, llvm::TargetMachine& machine, int optimization_level, bool whole_warp_blocks,
              const std::atomic<bool>* cancelled) {
  module.getContext().setDiagnosticHandler(std::make_unique<QuietVectorisationFailures>());
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager call_graph;
  llvm::ModuleAnalysisManager modules;
  llvm::PassInstrumentationCallbacks instrumentation;
  if (cancelled)
    instrumentation.registerShouldRunOptionalPassCallback(
        [cancelled](llvm::StringRef, llvm::Any) { return !cancelled->load(std::memory_order_relaxed); });
  // No SLP vectoriser in LLVM's default pipeline either: kernels vectorise across threads, and
  // vectorising one thread's straight-line code as well took a quarter of the default pipeline's
  // time on a 1.8 MB libcusparse module and left the benchmark suite no faster.
  llvm::PipelineTuningOptions tuning;
  tuning.SLPVectorization = false;
  llvm::PassBuilder builder(&machine, tuning, std::nullopt, &instrumentation);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(call_graph);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, call_graph, modules);
  if (optimization_level <= 0) {
    builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0).run(module, modules);
  } else if (optimization_level == 1) {
    quick_pipeline().run(module, modules);
  } else if (!machine.getTargetTriple().isAMDGPU()) {
    optimizing_pipeline(whole_warp_blocks).run(module, modules);
  } else {
    // AMDGPU's own passes join LLVM's default pipeline through its TargetMachine's callbacks,
    // and its code generator depends on them.
    builder.registerPeepholeEPCallback([](llvm::FunctionPassManager& passes, llvm::OptimizationLevel) { add_cleanups(passes); });
    builder.registerOptimizerLastEPCallback([](llvm::ModulePassManager& passes, llvm::OptimizationLevel) { add_last_passes(passes, llvm::FunctionPassManager()); });
    builder.buildPerModuleDefaultPipeline(optimization_level == 2 ? llvm::OptimizationLevel::O2 : llvm::OptimizationLevel::O3)
        .run(module, modules);
  }
}

}  // namespace xcuda::ptx::host
