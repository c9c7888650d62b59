// Lowers one PTX function body to LLVM IR, statement by statement. Instruction lowerings (one
// file per family, found through lowering_table()) use the helpers here to read operands, write
// registers and form addresses, so that register types, state spaces and immediates are
// handled in one place.
#pragma once

#include <functional>
#include <map>
#include <unordered_map>

#include <llvm/IR/IRBuilder.h>

#include "diagnostics.h"
#include "lower/layout.h"
#include "parse/ast.h"

namespace xcuda::ptx {

class ModuleLowering;

// The attribute of the helpers write_helper() writes.
inline constexpr const char* helper_attribute = "xcuda-lowering-helper";

class FunctionLowering {
 public:
  FunctionLowering(ModuleLowering& module, const Function& function, llvm::Function* target);

  void run();

  llvm::IRBuilder<>& builder() { return builder_; }
  llvm::LLVMContext& context() { return builder_.getContext(); }
  ModuleLowering& module() { return module_; }
  const Function& function() const { return function_; }
  llvm::Value* thread_context() const;
  // Writes the body of `helper`, a function beside the lowered one whose first parameter is the
  // thread context, that calls across the module share: `write` runs with the builder in the
  // helper's new entry block and thread_context() answering the helper's context. The builder
  // then goes back where it was. A helper that only one call uses goes back into its caller
  // once the module is lowered (module_lowering.cpp).
  void write_helper(llvm::Function* helper, const std::function<void()>& write);
  // A call of the helper `name`, (context, `arguments`...) -> `result`, which `body` writes on
  // first use: it returns what the helper returns.
  llvm::Value* call_helper(const std::string& name, llvm::Type* result, const std::vector<llvm::Value*>& arguments,
                           const std::function<llvm::Value*(llvm::Function& helper)>& body);

  llvm::Type* type_of(ScalarType type);
  llvm::IntegerType* integer_type(uint32_t bits) { return builder_.getIntNTy(bits); }

  // The operand's value as `type`: registers of another type of the same width are
  // reinterpreted, wider ones (ld/st/cvt) truncated; immediates and addresses are materialised.
  llvm::Value* read(const Operand& operand, ScalarType type);
  // Stores `value`, of `type`, into the destination register; a wider register receives the
  // value sign-extended for .s types and zero-extended otherwise.
  void write(const Operand& operand, llvm::Value* value, ScalarType type);
  // A pointer to the byte an address operand [base+offset] names in `space`.
  llvm::Value* address(const Operand& operand, StateSpace space);
  // Pointer to a variable, parameter or return value declared in this function.
  llvm::Value* declaration_pointer(uint32_t declaration);
  llvm::Value* shared_base();

  // `ret` (exited false) or `exit` (true): a kernel returns, a .func tells its caller whether
  // the thread is over (see function_result_type()).
  void return_from_function(bool exited);
  // After a call of a function that reports exit: returns too when the callee exited.
  void return_if_exited(llvm::Value* exited);

  llvm::BasicBlock* label_block(const std::string& name);
  // Continues in a fresh block after a terminator; code there is unreachable unless a label follows.
  void continue_after_terminator();
  llvm::AllocaInst* carry_flag();

  void error(SourceLocation location, std::string message);

 private:
  void allocate_storage();
  void begin_dynamic_stack();
  void emit_return(bool exited);
  void lower_instruction(const Instruction& instruction);
  llvm::Value* register_pointer(const Operand& operand);
  const VariableDeclaration& variable_of(const Operand& operand) const;
  llvm::Value* shared_variable_pointer(const VariableDeclaration& variable);
  llvm::Value* name_pointer(const Operand& operand);  // what a variable or function name points at
  llvm::Value* immediate(const Operand& operand, ScalarType type);
  llvm::Value* convert_bits(llvm::Value* value, llvm::Type* target, bool sign_extend);

  ModuleLowering& module_;
  const Function& function_;
  llvm::Function* target_;
  llvm::IRBuilder<> builder_;
  llvm::BasicBlock* allocation_block_ = nullptr;
  std::map<std::pair<uint32_t, uint32_t>, llvm::Value*> registers_;  // (declaration, index) → storage
  std::unordered_map<uint32_t, llvm::Value*> variables_;  // declaration index → pointer
  std::unordered_map<std::string, llvm::BasicBlock*> labels_;
  llvm::AllocaInst* carry_ = nullptr;
  llvm::Value* shared_base_ = nullptr;
  // Where the thread's stack of run-time allocations stood when a function that allocates on
  // it began: each return gives back what the function took.
  llvm::Value* stack_at_entry_ = nullptr;
  llvm::Value* helper_context_ = nullptr;  // while write_helper runs
};

}  // namespace xcuda::ptx
