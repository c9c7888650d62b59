// C library functions on AMDGPU come from ROCm's device libraries (ocml bitcode, Debian's
// rocm-device-libs). The bitcode leaves its configuration to constants the program defines
// (__oclc_*, normally from the oclc_*.bc files); we define them here, for any processor, with
// the settings PTX's non-.ftz, IEEE-rounded arithmetic needs.
#include <mutex>

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>

#include "target/amdgpu/amdgpu_target.h"

namespace xcuda::ptx::amdgpu {
namespace {

// The ocml function that computes C library function `name`, or empty.
std::string ocml_name(std::string_view name) {
  // What the lowering calls; everything else it expresses with LLVM intrinsics.
  static constexpr std::string_view single_precision[] = {"tanhf"};
  for (std::string_view function : single_precision)
    if (function == name) return "__ocml_" + std::string(name.substr(0, name.size() - 1)) + "_f32";
  return {};
}

// The ocml bitcode, read once; null when the package is not installed.
const llvm::MemoryBuffer* ocml_bitcode() {
  static std::once_flag loaded;
  static std::unique_ptr<llvm::MemoryBuffer> buffer;
  std::call_once(loaded, [] {
    auto file = llvm::MemoryBuffer::getFile(std::string(XCUDA_ROCM_DEVICE_LIBS) + "/ocml.bc");
    if (file) buffer = std::move(*file);
  });
  return buffer.get();
}

uint64_t configuration_value(std::string_view name, const Processor& processor, int code_object_version) {
  if (name == "__oclc_ISA_version") return processor.isa_version;
  if (name == "__oclc_wavefrontsize64") return processor.wavefront_size == 64;
  if (name == "__oclc_ABI_version") return static_cast<uint64_t>(code_object_version) * 100;
  if (name == "__oclc_correctly_rounded_sqrt32") return 1;
  return 0;  // __oclc_finite_only_opt, __oclc_unsafe_math_opt, __oclc_daz_opt: off
}

void define_configuration(llvm::Module& module, const Processor& processor, int code_object_version) {
  for (llvm::GlobalVariable& variable : module.globals()) {
    if (!variable.isDeclaration() || !variable.getName().starts_with("__oclc_")) continue;
    uint64_t value = configuration_value(variable.getName(), processor, code_object_version);
    variable.setInitializer(llvm::ConstantInt::get(variable.getValueType(), value));
    variable.setConstant(true);
    variable.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
}

}  // namespace

std::vector<std::string> link_device_libraries(llvm::Module& module, const Processor& processor, int code_object_version) {
  std::vector<std::pair<llvm::Function*, std::string>> wanted;
  std::vector<std::string> missing;
  for (llvm::Function& function : module) {
    if (!function.isDeclaration() || function.isIntrinsic() || function.use_empty()) continue;
    std::string replacement = ocml_name(function.getName());
    if (replacement.empty()) missing.emplace_back(function.getName());
    else wanted.emplace_back(&function, std::move(replacement));
  }
  if (wanted.empty()) return missing;
  const llvm::MemoryBuffer* bitcode = ocml_bitcode();
  auto library = bitcode == nullptr ? llvm::Expected<std::unique_ptr<llvm::Module>>(llvm::createStringError("not installed"))
                                    : llvm::getLazyBitcodeModule(bitcode->getMemBufferRef(), module.getContext());
  if (!library) {
    llvm::consumeError(library.takeError());
    for (const auto& [function, replacement] : wanted) missing.emplace_back(function->getName());
    return missing;
  }
  // The bitcode predates LLVM 19's data layout for AMDGPU; ours is the one that holds.
  (*library)->setDataLayout(module.getDataLayout());
  (*library)->setTargetTriple(module.getTargetTriple());
  for (const auto& [function, replacement] : wanted) {
    llvm::FunctionCallee ocml = module.getOrInsertFunction(replacement, function->getFunctionType());
    function->replaceAllUsesWith(ocml.getCallee());
    function->eraseFromParent();
  }
  if (llvm::Linker::linkModules(module, std::move(*library), llvm::Linker::LinkOnlyNeeded)) {
    for (const auto& [function, replacement] : wanted) missing.emplace_back(function->getName());
    return missing;
  }
  define_configuration(module, processor, code_object_version);
  return missing;
}

}  // namespace xcuda::ptx::amdgpu
