// Code generation to a relocatable object, then lld's ELF driver, in-process, to make it the
// shared object the HIP runtime loads (hipModuleLoadData wants a linked code object).
#include <mutex>

#include <lld/Common/Driver.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "target/amdgpu/amdgpu_target.h"

LLD_HAS_DRIVER(elf)

namespace xcuda::ptx::amdgpu {
namespace {

constexpr unsigned global_address_space = 1;

// A file that is removed when it goes out of scope.
class TemporaryFile {
 public:
  TemporaryFile(const char* suffix, std::error_code& error) {
    llvm::SmallString<128> path;
    if (!error) error = llvm::sys::fs::createTemporaryFile("xcuda-amdgpu", suffix, path);
    path_ = path.str().str();
  }
  ~TemporaryFile() {
    if (!path_.empty()) llvm::sys::fs::remove(path_);
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  const char* path() const { return path_.c_str(); }

 private:
  std::string path_;
};

// lld keeps global state: one link at a time in the process.
std::mutex lld_mutex;

std::vector<uint8_t> link_code_object(llvm::ArrayRef<char> object, DiagnosticSink& diagnostics) {
  std::error_code error;
  TemporaryFile input(".o", error);
  TemporaryFile output(".hsaco", error);
  if (!error) {
    llvm::raw_fd_ostream stream(input.path(), error);
    if (!error) stream.write(object.data(), object.size());
  }
  if (error) {
    diagnostics.error(SourceLocation{0, 0}, "cannot write a temporary file to link the code object: " + error.message());
    return {};
  }
  const char* arguments[] = {"ld.lld", "-shared", "--no-undefined", input.path(), "-o", output.path()};
  std::string messages;
  llvm::raw_string_ostream message_stream(messages);
  lld::Result result{};
  {
    std::lock_guard lock(lld_mutex);
    result = lld::lldMain(arguments, message_stream, message_stream, {{lld::Gnu, &lld::elf::link}});
  }
  if (result.retCode != 0) {
    diagnostics.error(SourceLocation{0, 0}, "internal compiler error: lld cannot link the code object: " + messages);
    return {};
  }
  auto linked = llvm::MemoryBuffer::getFile(output.path());
  if (!linked) {
    diagnostics.error(SourceLocation{0, 0}, "cannot read the linked code object: " + linked.getError().message());
    return {};
  }
  return std::vector<uint8_t>((*linked)->getBufferStart(), (*linked)->getBufferEnd());
}

}  // namespace

void finish_module(llvm::Module& module, int code_object_version) {
  // The lowering made its allocas before the module had AMDGPU's data layout, in the generic
  // address space; the stack is the private one, reached from generic pointers through a cast.
  unsigned stack_address_space = module.getDataLayout().getAllocaAddrSpace();
  for (llvm::Function& function : module) {
    std::vector<llvm::AllocaInst*> generic_allocas;
    for (llvm::BasicBlock& block : function)
      for (llvm::Instruction& instruction : block)
        if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&instruction); alloca && alloca->getAddressSpace() != stack_address_space)
          generic_allocas.push_back(alloca);
    for (llvm::AllocaInst* alloca : generic_allocas) {
      auto* placed = new llvm::AllocaInst(alloca->getAllocatedType(), stack_address_space, alloca->getArraySize(), alloca->getAlign(), "", alloca);
      placed->takeName(alloca);
      auto* cast = llvm::CastInst::CreatePointerBitCastOrAddrSpaceCast(placed, alloca->getType(), "", alloca);
      alloca->replaceAllUsesWith(cast);
      alloca->eraseFromParent();
    }
  }
  // The assembler calls unnamed functions and variables __unnamed_<n>, names nvcc also gives PTX
  // variables (an assert's function name): named, they cannot collide.
  for (llvm::GlobalValue& value : module.global_values())
    if (!value.hasName()) value.setName("xcuda.unnamed");
  // The lowering leaves .global and .const variables in the generic address space; on AMDGPU
  // variables live in the global one, and generic pointers reach them through a cast.
  std::vector<llvm::GlobalVariable*> generic;
  for (llvm::GlobalVariable& variable : module.globals())
    if (variable.getAddressSpace() == 0) generic.push_back(&variable);
  for (llvm::GlobalVariable* variable : generic) {
    auto* placed = new llvm::GlobalVariable(module, variable->getValueType(), variable->isConstant(), variable->getLinkage(),
                                            nullptr, "", nullptr, llvm::GlobalValue::NotThreadLocal, global_address_space);
    placed->takeName(variable);
    placed->setAlignment(variable->getAlign());
    if (variable->hasInitializer()) placed->setInitializer(variable->getInitializer());
    variable->replaceAllUsesWith(llvm::ConstantExpr::getAddrSpaceCast(placed, variable->getType()));
    variable->eraseFromParent();
  }
  for (llvm::Function& function : module)
    if (!function.isDeclaration() && function.getCallingConv() != llvm::CallingConv::AMDGPU_KERNEL)
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
  // The runtime finds .global and .const variables by name (hipModuleGetGlobal).
  for (llvm::GlobalVariable& variable : module.globals())
    if (!variable.hasLocalLinkage() && !variable.isDeclaration()) variable.setVisibility(llvm::GlobalValue::ProtectedVisibility);
  module.addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", code_object_version * 100);
}

std::vector<uint8_t> emit_code_object(llvm::Module& module, llvm::TargetMachine& machine, DiagnosticSink& diagnostics) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    diagnostics.error(SourceLocation{0, 0}, "the AMDGPU target cannot emit object files");
    return {};
  }
  passes.run(module);
  return link_code_object(buffer, diagnostics);
}

}  // namespace xcuda::ptx::amdgpu
