// PTX module → target-neutral LLVM module: variables become globals (or shared-memory offsets),
// functions become LLVM functions taking the thread context first, and kernels are listed in
// the intrinsics::kernels_metadata node for the target to wrap.
#pragma once

#include <memory>

#include <llvm/IR/Module.h>

#include "diagnostics.h"
#include "lower/layout.h"
#include "parse/ast.h"

namespace xcuda::ptx {

class ModuleLowering {
 public:
  ModuleLowering(const Module& module, const SharedLayout& shared, llvm::Module& target, DiagnosticSink& diagnostics);

  void run();

  const Module& source() const { return source_; }
  llvm::Module& target() { return target_; }
  DiagnosticSink& diagnostics() { return diagnostics_; }
  const SharedLayout& shared_layout() const { return shared_; }
  bool uses_dynamic_stack() const { return uses_dynamic_stack_; }

  llvm::Function* function(uint32_t index) const { return functions_[index]; }
  llvm::GlobalVariable* variable(uint32_t index) const { return variables_[index]; }
  // Declares (once) a target-neutral intrinsic from intrinsics.h.
  llvm::Function* intrinsic(const std::string& name, llvm::Type* result, llvm::ArrayRef<llvm::Type*> parameters);

 private:
  // A byte of an address, from an initialiser such as 0xFF00(table): no relocation of an object
  // format takes one, so the module's initialiser (intrinsics::module_initialiser) stores it.
  struct MaskedAddress {
    uint64_t byte_offset;  // within the variable
    uint32_t element_bytes;
    llvm::Constant* address;
    uint64_t mask;
  };

  void declare_variables();
  llvm::Constant* initial_value(const VariableDeclaration& variable, std::vector<MaskedAddress>& masked);
  void define_initialiser(const std::vector<std::pair<uint32_t, MaskedAddress>>& masked);
  llvm::Constant* named_address(const std::string& name) const;
  void declare_functions();

  const Module& source_;
  const SharedLayout& shared_;
  llvm::Module& target_;
  DiagnosticSink& diagnostics_;
  std::vector<llvm::Function*> functions_;          // by index in source_.functions
  std::vector<llvm::GlobalVariable*> variables_;    // by index in source_.variables; null for .shared
  bool uses_dynamic_stack_;
};

// A .func with a body returns i1: whether the thread executed `exit` inside it, which ends
// the thread in every caller up to the kernel. Kernels, and the .extern functions a target
// provides (vprintf, malloc …), return nothing.
llvm::Type* function_result_type(llvm::LLVMContext& context, const Function& function);

// Indirect calls stay calls through a pointer, except to functions that reach a block barrier
// or warp collective: those get a direct call under a comparison of the pointer, so that targets
// which must see every path to a barrier (the host's block formation) find them.
void call_synchronizing_targets_directly(llvm::Module& module);

// Inlines each of the lowering's helpers (FunctionLowering::call_helper) that one call uses: as a
// function of its own a helper costs more to compile than it saves there (tests/cuda/
// mma_numerics.cu's module, six mma.sync forms used once each, took 108 ms of CPU instead of 94).
// A target runs it once it has made the copies of its own that call a helper too (the host's
// code for a block's threads standing apart).
void inline_single_use_helpers(llvm::Module& module);

std::unique_ptr<llvm::Module> lower_module(const Module& module, const SharedLayout& shared,
                                           llvm::LLVMContext& context, DiagnosticSink& diagnostics);

}  // namespace xcuda::ptx
