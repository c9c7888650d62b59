// The AMDGPU TargetMachine for one processor, in the wavefront size we compile for.
#include <mutex>

#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/TargetParser.h>

#include "target/amdgpu/amdgpu_target.h"

namespace xcuda::ptx::amdgpu {
namespace {

constexpr const char* triple = "amdgcn-amd-amdhsa";  // the HSA OS/ABI the HIP runtime loads

}  // namespace

std::optional<Processor> find_processor(const std::string& name) {
  llvm::AMDGPU::GPUKind kind = llvm::AMDGPU::parseArchAMDGCN(name);
  if (kind == llvm::AMDGPU::GK_NONE) return std::nullopt;
  // Processors that can run wave32 (gfx10 and later) do so: one CUDA warp per wavefront.
  bool wave32 = (llvm::AMDGPU::getArchAttrAMDGCN(kind) & llvm::AMDGPU::FEATURE_WAVE32) != 0;
  llvm::AMDGPU::IsaVersion version = llvm::AMDGPU::getIsaVersion(name);
  return Processor{name, wave32 ? 32u : 64u, version.Major * 1000 + version.Minor * 100 + version.Stepping};
}

std::unique_ptr<llvm::TargetMachine> create_target_machine(const std::string& name, int optimization_level,
                                                           DiagnosticSink& diagnostics) {
  std::optional<Processor> processor = find_processor(name);
  if (!processor) {
    diagnostics.error(SourceLocation{0, 0}, "unknown AMDGPU processor '" + name + "' (expected gfx90a, gfx1100, ...)");
    return nullptr;
  }
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    // Inline assembly, which ockl's bitcode holds, is parsed while the object is written.
    LLVMInitializeAMDGPUAsmParser();
  });
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) {
    diagnostics.error(SourceLocation{0, 0}, std::string("this LLVM has no AMDGPU target: ") + error);
    return nullptr;
  }
  std::string features = processor->wavefront_size == 32 ? "+wavefrontsize32" : "+wavefrontsize64";
  // Alloca promotion may move private arrays into LDS after the module's .shared block, where
  // dynamic shared memory must begin (see runtime_services.cpp); SROA still keeps small ones in
  // registers.
  features += ",-promote-alloca";
  auto level = optimization_level <= 0   ? llvm::CodeGenOptLevel::None
               : optimization_level == 1 ? llvm::CodeGenOptLevel::Less
               : optimization_level == 2 ? llvm::CodeGenOptLevel::Default
                                         : llvm::CodeGenOptLevel::Aggressive;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, name, features, llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt, level));
}

}  // namespace xcuda::ptx::amdgpu
