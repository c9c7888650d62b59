// The AMDGPU module's last touches before code generation; the code object is then linked with
// lld (target/object_file.h), since hipModuleLoadData wants a linked code object.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include "target/amdgpu/amdgpu_target.h"
#include "target/object_file.h"

namespace xcuda::ptx::amdgpu {
namespace {

constexpr unsigned global_address_space = 1;

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
  std::vector<uint8_t> object = emit_object(module, machine, "AMDGPU", diagnostics);
  if (object.empty()) return {};
  return link_objects({&object, 1}, {"-shared", "--no-undefined"}, "the code object", diagnostics);
}

}  // namespace xcuda::ptx::amdgpu
