#include "lower/function_lowering.h"

#include <bit>

#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {

FunctionLowering::FunctionLowering(ModuleLowering& module, const Function& function, llvm::Function* target)
    : module_(module), function_(function), target_(target), builder_(target->getContext()) {}

llvm::Value* FunctionLowering::thread_context() const { return helper_context_ != nullptr ? helper_context_ : target_->getArg(0); }

void FunctionLowering::write_helper(llvm::Function* helper, const std::function<void()>& write) {
  llvm::IRBuilderBase::InsertPointGuard guard(builder_);
  llvm::Value* outer = helper_context_;
  helper_context_ = helper->getArg(0);
  helper->addFnAttr(helper_attribute);
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context(), "entry", helper));
  write();
  helper_context_ = outer;
}

llvm::Value* FunctionLowering::call_helper(const std::string& name, llvm::Type* result, const std::vector<llvm::Value*>& arguments,
                                           const std::function<llvm::Value*(llvm::Function& helper)>& body) {
  std::vector<llvm::Value*> values{thread_context()};
  values.insert(values.end(), arguments.begin(), arguments.end());
  llvm::Function* helper = module_.target().getFunction(name);
  if (helper == nullptr) {
    std::vector<llvm::Type*> parameters;
    for (llvm::Value* value : values) parameters.push_back(value->getType());
    helper = llvm::Function::Create(llvm::FunctionType::get(result, parameters, false), llvm::GlobalValue::InternalLinkage, name,
                                    module_.target());
    helper->addFnAttr(llvm::Attribute::NoInline);
    helper->setDoesNotThrow();
    write_helper(helper, [&] { builder_.CreateRet(body(*helper)); });
  }
  return builder_.CreateCall(helper, values);
}

void FunctionLowering::error(SourceLocation location, std::string message) {
  module_.diagnostics().error(location, std::move(message));
}

llvm::Type* FunctionLowering::type_of(ScalarType type) {
  switch (type) {
    case ScalarType::pred: return builder_.getInt1Ty();
    case ScalarType::f16: return builder_.getHalfTy();
    case ScalarType::bf16: return builder_.getBFloatTy();
    case ScalarType::f32: return builder_.getFloatTy();
    case ScalarType::f64: return builder_.getDoubleTy();
    default: return integer_type(bit_width(type));
  }
}

void FunctionLowering::allocate_storage() {
  allocation_block_ = llvm::BasicBlock::Create(context(), "allocations", target_);
  builder_.SetInsertPoint(allocation_block_);
  const auto& declarations = function_.declarations;
  uint32_t argument = 1;
  ParameterLayout kernel_parameters;
  if (function_.is_entry) kernel_parameters = lay_out_parameters(function_.parameters);
  size_t formal_count = function_.returns.size() + function_.parameters.size();
  for (uint32_t index = 0; index < declarations.size(); ++index) {
    const VariableDeclaration& declaration = *declarations[index];
    if (index < formal_count) {
      // Formals are passed by pointer: a kernel's point into the parameter buffer, a function's
      // into its caller's .param variables.
      llvm::Value* pointer = function_.is_entry
                                 ? builder_.CreateConstGEP1_32(builder_.getInt8Ty(), target_->getArg(1),
                                                               kernel_parameters.offsets[index], declaration.name)
                                 : static_cast<llvm::Value*>(target_->getArg(argument++));
      if (declaration.space == StateSpace::reg) registers_[{index, 0}] = pointer;
      else variables_[index] = pointer;
      continue;
    }
    switch (declaration.space) {
      case StateSpace::reg:
        break;  // allocated on first use
      case StateSpace::local:
      case StateSpace::param: {
        if (declaration.size_in_bytes() > max_local_bytes) {
          error(declaration.location, "'" + declaration.name + "' is larger than " + std::to_string(max_local_bytes) + " bytes");
          break;
        }
        auto* storage = builder_.CreateAlloca(llvm::ArrayType::get(builder_.getInt8Ty(), declaration.size_in_bytes()),
                                              nullptr, declaration.name);
        storage->setAlignment(llvm::Align(std::max<uint32_t>(declaration.effective_alignment(), 1)));
        variables_[index] = storage;
        break;
      }
      case StateSpace::shared:
        break;  // an offset from the shared base, see declaration_pointer()
      default:
        error(declaration.location, "." + std::string(name_of(declaration.space)) +
                                        " variables inside a function are not supported yet");
    }
  }
}

llvm::Value* FunctionLowering::shared_base() {
  if (shared_base_ == nullptr) {
    llvm::IRBuilder<> allocation(allocation_block_);
    auto* pointer = builder_.getPtrTy();
    shared_base_ = allocation.CreateCall(module_.intrinsic(intrinsics::shared_base, pointer, {pointer}),
                                         {thread_context()}, "shared");
  }
  return shared_base_;
}

llvm::AllocaInst* FunctionLowering::carry_flag() {
  if (carry_ == nullptr) {
    llvm::IRBuilder<> allocation(allocation_block_);
    carry_ = allocation.CreateAlloca(builder_.getInt1Ty(), nullptr, "carry");
  }
  return carry_;
}

llvm::BasicBlock* FunctionLowering::label_block(const std::string& name) { return labels_.at(name); }

void FunctionLowering::continue_after_terminator() {
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context(), "after", target_));
}

// A kernel starts its threads' stacks empty, so that a block does not inherit what the thread
// that last ran there left on it.
void FunctionLowering::begin_dynamic_stack() {
  auto* pointer = builder_.getPtrTy();
  if (function_.is_entry && module_.uses_dynamic_stack())
    builder_.CreateCall(module_.intrinsic(intrinsics::stack_reset, builder_.getVoidTy(), {pointer}), {thread_context()});
  else if (!function_.is_entry && allocates_on_stack(function_))
    stack_at_entry_ = builder_.CreateCall(module_.intrinsic(intrinsics::stack_save, pointer, {pointer}), {thread_context()});
}

void FunctionLowering::emit_return(bool exited) {
  if (stack_at_entry_ != nullptr) {
    auto* pointer = builder_.getPtrTy();
    builder_.CreateCall(module_.intrinsic(intrinsics::stack_restore, builder_.getVoidTy(), {pointer, pointer}),
                        {thread_context(), stack_at_entry_});
  }
  if (function_.is_entry) builder_.CreateRetVoid();
  else builder_.CreateRet(builder_.getInt1(exited));
}

void FunctionLowering::return_from_function(bool exited) {
  emit_return(exited);
  continue_after_terminator();
}

void FunctionLowering::return_if_exited(llvm::Value* exited) {
  auto* leave = llvm::BasicBlock::Create(context(), "exited", target_);
  auto* rest = llvm::BasicBlock::Create(context(), "not_exited", target_);
  builder_.CreateCondBr(exited, leave, rest);
  builder_.SetInsertPoint(leave);
  emit_return(true);
  builder_.SetInsertPoint(rest);
}

void FunctionLowering::run() {
  allocate_storage();
  auto* body = llvm::BasicBlock::Create(context(), "body", target_);
  for (const auto& statement : function_.body)
    if (const auto* label = std::get_if<Label>(&statement))
      labels_[label->name] = llvm::BasicBlock::Create(context(), label->name, target_);
  builder_.SetInsertPoint(body);
  begin_dynamic_stack();
  for (const auto& statement : function_.body) {
    if (const auto* label = std::get_if<Label>(&statement)) {
      llvm::BasicBlock* block = labels_.at(label->name);
      if (builder_.GetInsertBlock()->getTerminator() == nullptr) builder_.CreateBr(block);
      builder_.SetInsertPoint(block);
    } else if (const auto* instruction = std::get_if<Instruction>(&statement)) {
      lower_instruction(*instruction);
    }
  }
  if (builder_.GetInsertBlock()->getTerminator() == nullptr) emit_return(false);
  llvm::IRBuilder<>(allocation_block_).CreateBr(body);
}

void FunctionLowering::lower_instruction(const Instruction& instruction) {
  const LoweringTable& table = lowering_table();
  auto found = table.find(instruction.opcode);
  if (found == table.end()) {
    error(instruction.location, "'" + instruction.opcode + "' is not supported yet");
    return;
  }
  if (!instruction.guard) {
    found->second(*this, instruction);
    return;
  }
  llvm::Value* predicate = read(instruction.guard->predicate, ScalarType::pred);
  if (instruction.guard->negated) predicate = builder_.CreateNot(predicate);
  auto* guarded = llvm::BasicBlock::Create(context(), "guarded", target_);
  auto* rest = llvm::BasicBlock::Create(context(), "rest", target_);
  builder_.CreateCondBr(predicate, guarded, rest);
  builder_.SetInsertPoint(guarded);
  found->second(*this, instruction);
  if (builder_.GetInsertBlock()->getTerminator() == nullptr) builder_.CreateBr(rest);
  builder_.SetInsertPoint(rest);
}

llvm::Value* FunctionLowering::register_pointer(const Operand& operand) {
  auto key = std::make_pair(operand.declaration, operand.register_index);
  auto found = registers_.find(key);
  if (found != registers_.end()) return found->second;
  const VariableDeclaration& declaration = *function_.declarations[operand.declaration];
  llvm::IRBuilder<> allocation(allocation_block_);
  llvm::Type* type = type_of(declaration.type);
  if (declaration.vector_width > 1) type = llvm::FixedVectorType::get(type, declaration.vector_width);
  auto* storage = allocation.CreateAlloca(type, nullptr, operand.name);
  registers_[key] = storage;
  return storage;
}

llvm::Value* FunctionLowering::convert_bits(llvm::Value* value, llvm::Type* target, bool sign_extend) {
  llvm::Type* source = value->getType();
  if (source == target) return value;
  uint32_t source_bits = source->getPrimitiveSizeInBits();
  uint32_t target_bits = target->getPrimitiveSizeInBits();
  if (source_bits == target_bits) return builder_.CreateBitCast(value, target);
  llvm::Value* bits = source->isIntegerTy() ? value : builder_.CreateBitCast(value, integer_type(source_bits));
  bits = builder_.CreateIntCast(bits, integer_type(target_bits), sign_extend);
  return target->isIntegerTy() ? bits : builder_.CreateBitCast(bits, target);
}

llvm::Value* FunctionLowering::declaration_pointer(uint32_t declaration) {
  auto found = variables_.find(declaration);
  if (found != variables_.end()) return found->second;
  const VariableDeclaration& variable = *function_.declarations[declaration];
  if (variable.space == StateSpace::shared) return shared_variable_pointer(variable);
  // Storage that could not be allocated has been reported already.
  return llvm::PoisonValue::get(builder_.getPtrTy());
}

const VariableDeclaration& FunctionLowering::variable_of(const Operand& operand) const {
  if (operand.resolution == Operand::Resolution::local_variable) return *function_.declarations[operand.declaration];
  return module_.source().variables[operand.declaration];
}

llvm::Value* FunctionLowering::shared_variable_pointer(const VariableDeclaration& variable) {
  const SharedLayout& layout = module_.shared_layout();
  uint32_t offset = variable.unsized_array ? layout.dynamic_offset : layout.offsets.at(&variable);
  return builder_.CreateConstGEP1_32(builder_.getInt8Ty(), shared_base(), offset, variable.name);
}

llvm::Value* FunctionLowering::name_pointer(const Operand& operand) {
  using Resolution = Operand::Resolution;
  if (operand.resolution == Resolution::function) return module_.function(operand.declaration);
  if (operand.resolution == Resolution::local_variable) return declaration_pointer(operand.declaration);
  if (llvm::GlobalVariable* global = module_.variable(operand.declaration)) return global;
  return shared_variable_pointer(variable_of(operand));
}

llvm::Value* FunctionLowering::immediate(const Operand& operand, ScalarType type) {
  llvm::Type* target = type_of(type);
  if (operand.kind == Operand::Kind::integer) {
    if (target->isFloatingPointTy())
      return llvm::ConstantFP::get(target, static_cast<double>(static_cast<int64_t>(operand.integer)));
    if (type == ScalarType::pred) return builder_.getInt1(operand.integer != 0);
    return llvm::ConstantInt::get(target, operand.integer);
  }
  if (operand.float_bits == 0) {
    if (target->isFloatingPointTy()) return llvm::ConstantFP::get(target, operand.floating);
    return llvm::ConstantInt::get(target, static_cast<uint64_t>(static_cast<int64_t>(operand.floating)));
  }
  llvm::Type* literal_type = operand.float_bits == 32 ? builder_.getFloatTy() : builder_.getDoubleTy();
  llvm::APInt bits(operand.float_bits, operand.integer);
  auto* literal = llvm::ConstantFP::get(context(), llvm::APFloat(literal_type->getFltSemantics(), bits));
  if (target == literal_type) return literal;
  if (target->isFloatingPointTy()) {
    llvm::APFloat value = literal->getValueAPF();
    bool lost = false;
    value.convert(target->getFltSemantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
    return llvm::ConstantFP::get(context(), value);
  }
  // A float literal used as raw bits, e.g. mov.b32 %r1, 0f3F800000.
  return llvm::ConstantInt::get(target, bits.zextOrTrunc(target->getIntegerBitWidth()));
}

llvm::Value* FunctionLowering::read(const Operand& operand, ScalarType type) {
  using Resolution = Operand::Resolution;
  llvm::Type* target = type_of(type);
  llvm::Value* value = nullptr;
  if (operand.kind == Operand::Kind::integer || operand.kind == Operand::Kind::floating) {
    value = immediate(operand, type);
  } else if (operand.kind != Operand::Kind::name) {
    error(operand.location, "this operand cannot be used as a value here");
    return llvm::PoisonValue::get(target);
  } else if (operand.offset != 0 && (operand.resolution == Resolution::register_ || operand.resolution == Resolution::special_register)) {
    error(operand.location, "only a variable's or function's address takes a displacement");
    return llvm::PoisonValue::get(target);
  } else if (operand.resolution == Resolution::register_) {
    const VariableDeclaration& declaration = *function_.declarations[operand.declaration];
    llvm::Type* stored = type_of(declaration.type);
    value = builder_.CreateLoad(stored, register_pointer(operand), operand.name);
    value = convert_bits(value, target, false);
  } else if (operand.resolution == Resolution::special_register) {
    value = convert_bits(read_special_register(*this, operand), target, false);
  } else if (operand.resolution == Resolution::label || operand.resolution == Resolution::unresolved) {
    error(operand.location, "'" + operand.name + "' is not a value");
    return llvm::PoisonValue::get(target);
  } else {
    // A variable's or function's address: an offset for .shared, a host address otherwise.
    bool shared = operand.resolution != Resolution::function && variable_of(operand).space == StateSpace::shared;
    llvm::Value* pointer = builder_.CreateConstGEP1_64(builder_.getInt8Ty(), name_pointer(operand), static_cast<uint64_t>(operand.offset));
    llvm::Value* address = shared ? builder_.CreatePtrDiff(builder_.getInt8Ty(), pointer, shared_base())
                                  : builder_.CreatePtrToInt(pointer, builder_.getInt64Ty());
    value = convert_bits(address, target, false);
  }
  if (operand.negated) value = builder_.CreateNot(value);
  return value;
}

void FunctionLowering::write(const Operand& operand, llvm::Value* value, ScalarType type) {
  if (operand.kind == Operand::Kind::sink) return;
  if (operand.kind != Operand::Kind::name || operand.resolution != Operand::Resolution::register_) {
    error(operand.location, "the destination must be a register");
    return;
  }
  const VariableDeclaration& declaration = *function_.declarations[operand.declaration];
  llvm::Value* converted = convert_bits(value, type_of(declaration.type), is_signed(type));
  builder_.CreateStore(converted, register_pointer(operand));
}

llvm::Value* FunctionLowering::address(const Operand& operand, StateSpace space) {
  using Resolution = Operand::Resolution;
  llvm::Type* byte = builder_.getInt8Ty();
  if (operand.name.empty()) {
    if (space == StateSpace::shared) return builder_.CreateConstGEP1_64(byte, shared_base(), static_cast<uint64_t>(operand.offset));
    return builder_.CreateIntToPtr(builder_.getInt64(static_cast<uint64_t>(operand.offset)), builder_.getPtrTy());
  }
  llvm::Value* base = nullptr;
  if (operand.resolution == Resolution::register_) {
    const VariableDeclaration& declaration = *function_.declarations[operand.declaration];
    llvm::Value* value = builder_.CreateLoad(type_of(declaration.type), register_pointer(operand), operand.name);
    value = builder_.CreateZExtOrTrunc(value, builder_.getInt64Ty());
    base = space == StateSpace::shared ? builder_.CreateGEP(byte, shared_base(), value)
                                       : builder_.CreateIntToPtr(value, builder_.getPtrTy());
  } else {
    base = name_pointer(operand);
  }
  if (operand.offset == 0) return base;
  return builder_.CreateGEP(byte, base, builder_.getInt64(static_cast<uint64_t>(operand.offset)));
}

}  // namespace xcuda::ptx
