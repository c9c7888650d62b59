// The host's LLVM TargetMachine: the CPU we run on, its features, PIC, small code model.
#include <mutex>

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>
#include <llvm/TargetParser/Triple.h>

#include "target/host/host_target.h"
#include "target/object_file.h"

namespace xcuda::ptx::host {

namespace {

void initialize_llvm() {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // No loop strength reduction. In the loops over a block's threads, vectorised, each thread's
    // stored registers and the warp's offers are a use of the loop's index, and the pass spent
    // its time generating ways to share their address computations: more than half the code
    // generation of tests/cuda/mma_numerics.cu (0.216 -> 0.096 s), a third of whole_warps.cu's
    // (0.457 -> 0.306 s), and 0.28 s of a 1.8 MB libcusparse module's 2.37. x86 addresses
    // fold base + index * scale + offset anyway: over three runs of the benchmark suite
    // (tests/bench) only barrier_loop ran slower without it (1.06 -> 1.21 ms median), the other
    // ten within their noise. The setting is process-wide: it reaches code generation for AMDGPU
    // in the same process too.
    set_code_generation_option("disable-lsr", "true");
    // Nor moving chains of integer instructions to AVX-512 mask registers: it looked at every
    // function for 9% of tests/cuda/mma_numerics.cu's code generation and 4.5% of a 1.8 MB
    // libcusparse module's, and changed none of their objects, nor whole_warps.cu's; of the 45
    // sm_90 modules of the nvcc corpus, one object changed (early_exit_collectives, by 64 bytes).
    set_code_generation_option("disable-x86-domain-reassignment", "true");
    // Nor a vectorised epilogue after a vectorised loop over threads (optimizer.cpp says why),
    // process-wide as well.
    set_code_generation_option("enable-epilogue-vectorization", "false");
    // Nor the greedy register allocator's growing of a region around a live range before it
    // splits one: its search grows with the number of blocks a range crosses, the many loops of a
    // block function. Without it, a 1.8 MB libcusparse module compiled in 4.5% less CPU time
    // (3.12-3.13 s instead of 3.26-3.30, `perf stat -r 2 xcuda compile --target host
    // --whole-warp-blocks`), tests/cuda/guarded_regions.cu's module in 8% less (137 -> 126 ms,
    // -j 1); the benchmark suite's kernels ran as fast (five alternations). Process-wide too.
    set_code_generation_option("grow-region-complexity-budget", "0");
  });
}

// The LLVM target of the process's own triple.
const llvm::Target* host_target(DiagnosticSink& diagnostics) {
  initialize_llvm();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(llvm::sys::getProcessTriple(), error);
  if (target == nullptr) diagnostics.error(SourceLocation{0, 0}, "no LLVM target for the host (" + llvm::sys::getProcessTriple() + "): " + error);
  return target;
}

// A machine for the process's own triple, `processor` and `features`.
std::unique_ptr<llvm::TargetMachine> create_machine(const std::string& processor, const std::string& features,
                                                    llvm::CodeGenOptLevel level, DiagnosticSink& diagnostics) {
  const llvm::Target* target = host_target(diagnostics);
  if (target == nullptr) return nullptr;
  const std::string triple = llvm::sys::getProcessTriple();
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(triple, processor, features, llvm::TargetOptions(),
                                                                          llvm::Reloc::PIC_, llvm::CodeModel::Small, level));
}

// The host's features where they differ from those of its CPU model `processor`. Each machine,
// and its first subtarget, expands every feature it is given into all that feature implies: the
// host's whole list, 150 features on this Sapphire Rapids, cost every compile 2.6 M instructions
// (valgrind, saxpy on two threads: 32.9 M -> 30.3 M; tests/cuda/mma_numerics.cu's module 398.6 ->
// 393.1 M), where its 20 differences cost little, for the same objects. The features come out
// the same: one the host lacks is taken away with all that implies it, one it has is added with
// all it implies (the bits of both strings compared equal, on this machine and under valgrind's
// Haswell).
std::string host_feature_differences(const std::string& processor, DiagnosticSink& diagnostics) {
  const llvm::Target* target = host_target(diagnostics);
  if (target == nullptr) return "";
  std::unique_ptr<llvm::MCSubtargetInfo> model(target->createMCSubtargetInfo(llvm::sys::getProcessTriple(), processor, ""));
  llvm::SubtargetFeatures differences;
  for (const auto& [name, enabled] : llvm::sys::getHostCPUFeatures()) {
    const auto known = llvm::find_if(model->getAllProcessorFeatures(), [&](const llvm::SubtargetFeatureKV& feature) { return name == feature.Key; });
    if (known == model->getAllProcessorFeatures().end() || model->getFeatureBits()[known->Value] != enabled)
      differences.AddFeature(name, enabled);
  }
  return differences.getString();
}

}  // namespace

std::shared_ptr<llvm::TargetMachine> target_machine(int optimization_level, DiagnosticSink& diagnostics) {
  // Asking the CPU (cpuid, which a virtual machine's hypervisor answers) and expanding each of
  // its features into what it implies took 1-2 ms for every machine made (tests/cuda/
  // mma_numerics.cu on one thread in seven shares against one: SetImpliedBits and
  // getHostCPUFeatures the most grown functions, `perf record`): once per process then, and a
  // machine kept for every later compile on its thread. `xcuda precompile` of 40 test programs
  // (102 compile units, two threads) took 1.80-1.99 s of CPU instead of 2.04-2.08, 1.02-1.09 s
  // of wall-clock time instead of 1.13-1.16; whole_warps.cu's module, in five shares, 79-80 ms
  // instead of 83-84 (`perf stat -r 10 xcuda compile --target host --whole-warp-blocks`).
  static const std::string cpu = llvm::sys::getHostCPUName().str();
  static const std::string features = host_feature_differences(cpu, diagnostics);
  // The first tier (level 1) selects instructions the fast way: most of the time of code
  // generation goes to the DAG instruction selector and the greedy register allocator. The
  // others stop short of Default, which adds the post-register-allocation scheduler: its time
  // grows with the square of a block's length, and a block function's vector code makes long
  // blocks (two thirds of the code generation of tests/cuda/whole_warps.cu, for the same object).
  const bool quick = optimization_level <= 1;
  thread_local std::shared_ptr<llvm::TargetMachine> machines[2];
  std::shared_ptr<llvm::TargetMachine>& machine = machines[quick ? 0 : 1];
  if (machine != nullptr) return machine;
  machine = create_machine(cpu, features, quick ? llvm::CodeGenOptLevel::None : llvm::CodeGenOptLevel::Less, diagnostics);
  return machine;
}

std::unique_ptr<llvm::TargetMachine> lowest_level_target_machine(DiagnosticSink& diagnostics) {
  const char* processor = llvm::Triple(llvm::sys::getProcessTriple()).getArch() == llvm::Triple::x86_64 ? "x86-64-v2" : "generic";
  return create_machine(processor, "", llvm::CodeGenOptLevel::Default, diagnostics);
}

}  // namespace xcuda::ptx::host
