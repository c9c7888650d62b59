// The host's LLVM TargetMachine: the CPU we run on, its features, PIC, small code model.
#include <mutex>

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include "target/host/host_target.h"

namespace xcuda::ptx::host {

std::unique_ptr<llvm::TargetMachine> create_target_machine(int optimization_level, DiagnosticSink& diagnostics) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  std::string triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) {
    diagnostics.error(SourceLocation{0, 0}, "no LLVM target for the host (" + triple + "): " + error);
    return nullptr;
  }
  llvm::SubtargetFeatures features;
  for (const auto& feature : llvm::sys::getHostCPUFeatures()) features.AddFeature(feature.first(), feature.second);
  // The first tier (level 1) selects instructions the fast way: most of the time of code
  // generation goes to the DAG instruction selector and the greedy register allocator. The
  // others stop short of Default, which adds the post-register-allocation scheduler: its time
  // grows with the square of a block's length, and a block function's vector code makes long
  // blocks (two thirds of the code generation of tests/cuda/whole_warps.cu, for the same object).
  auto level = optimization_level <= 1 ? llvm::CodeGenOptLevel::None : llvm::CodeGenOptLevel::Less;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(), llvm::TargetOptions(), llvm::Reloc::PIC_,
      llvm::CodeModel::Small, level));
}

}  // namespace xcuda::ptx::host
