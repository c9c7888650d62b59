// C library functions on AMDGPU come from ROCm's device libraries (Debian's rocm-device-libs):
// ocml's bitcode, and ockl's for the hostcall messages of printf and assert. The bitcode leaves its configuration to constants the program defines
// (__oclc_*, normally from the oclc_*.bc files); we define them here, for any processor, with
// the settings PTX's non-.ftz, IEEE-rounded arithmetic needs.
#include <map>
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
  // What the lowering calls (tanhf) and the texture sampler (powf, for sRGB); everything else
  // they express with LLVM intrinsics.
  static constexpr std::string_view single_precision[] = {"tanhf", "powf"};
  for (std::string_view function : single_precision)
    if (function == name) return "__ocml_" + std::string(name.substr(0, name.size() - 1)) + "_f32";
  return {};
}

// A device library's bitcode (ocml.bc, ockl.bc), read once; null when the package is not installed.
const llvm::MemoryBuffer* library_bitcode(std::string_view file) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<llvm::MemoryBuffer>, std::less<>> buffers;
  std::lock_guard lock(mutex);
  auto found = buffers.find(file);
  if (found == buffers.end()) {
    auto read = llvm::MemoryBuffer::getFile(std::string(XCUDA_ROCM_DEVICE_LIBS) + "/" + std::string(file));
    found = buffers.emplace(std::string(file), read ? std::move(*read) : nullptr).first;
  }
  return found->second.get();
}

// Links the library's definitions of the functions the module declares; false if it cannot.
bool link_library(llvm::Module& module, std::string_view file) {
  const llvm::MemoryBuffer* bitcode = library_bitcode(file);
  if (bitcode == nullptr) return false;
  auto library = llvm::getLazyBitcodeModule(bitcode->getMemBufferRef(), module.getContext());
  if (!library) {
    llvm::consumeError(library.takeError());
    return false;
  }
  // The bitcode predates LLVM 19's data layout for AMDGPU; ours is the one that holds.
  (*library)->setDataLayout(module.getDataLayout());
  (*library)->setTargetTriple(module.getTargetTriple());
  return !llvm::Linker::linkModules(module, std::move(*library), llvm::Linker::LinkOnlyNeeded);
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
  std::vector<std::string> missing, from_ockl;
  for (llvm::Function& function : module) {
    if (!function.isDeclaration() || function.isIntrinsic() || function.use_empty()) continue;
    std::string replacement = ocml_name(function.getName());
    if (function.getName().starts_with("__ockl_")) from_ockl.emplace_back(function.getName());
    else if (replacement.empty()) missing.emplace_back(function.getName());
    else wanted.emplace_back(&function, std::move(replacement));
  }
  if (wanted.empty() && from_ockl.empty()) return missing;
  std::vector<std::string> requested = from_ockl;
  for (const auto& [function, replacement] : wanted) {
    requested.emplace_back(function->getName());
    llvm::FunctionCallee ocml = module.getOrInsertFunction(replacement, function->getFunctionType());
    function->replaceAllUsesWith(ocml.getCallee());
    function->eraseFromParent();
  }
  if ((!wanted.empty() && !link_library(module, "ocml.bc")) || (!from_ockl.empty() && !link_library(module, "ockl.bc"))) {
    missing.insert(missing.end(), requested.begin(), requested.end());
    return missing;
  }
  define_configuration(module, processor, code_object_version);
  return missing;
}

}  // namespace xcuda::ptx::amdgpu
