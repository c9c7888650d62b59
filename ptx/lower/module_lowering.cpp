#include "lower/module_lowering.h"

#include <bit>
#include <cstring>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "lower/function_lowering.h"
#include "lower/intrinsics.h"

namespace xcuda::ptx {

ModuleLowering::ModuleLowering(const Module& module, const SharedLayout& shared, llvm::Module& target,
                               DiagnosticSink& diagnostics)
    : source_(module), shared_(shared), target_(target), diagnostics_(diagnostics),
      uses_dynamic_stack_(ptx::uses_dynamic_stack(module)) {}

llvm::Function* ModuleLowering::intrinsic(const std::string& name, llvm::Type* result,
                                          llvm::ArrayRef<llvm::Type*> parameters) {
  if (llvm::Function* existing = target_.getFunction(name)) return existing;
  auto* type = llvm::FunctionType::get(result, parameters, false);
  auto* function = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, target_);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  return function;
}

// The bits one number occupies in an element of `type`.
static uint64_t element_bits(const InitialValue& value, ScalarType type) {
  if (value.kind == InitialValue::Kind::integer) return value.integer;
  // A 0f literal keeps its exact bits in an f32 or integer element.
  if (value.float_is_single && (type == ScalarType::f32 || !is_float(type))) return value.integer;
  double number = value.float_is_single ? std::bit_cast<float>(static_cast<uint32_t>(value.integer)) : value.floating;
  if (!is_float(type)) return static_cast<uint64_t>(static_cast<int64_t>(number));
  if (type == ScalarType::f64) return std::bit_cast<uint64_t>(number);
  llvm::APFloat converted(number);
  bool lost = false;
  const auto& semantics = type == ScalarType::f32    ? llvm::APFloat::IEEEsingle()
                          : type == ScalarType::bf16 ? llvm::APFloat::BFloat()
                                                     : llvm::APFloat::IEEEhalf();
  converted.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
  return converted.bitcastToAPInt().getZExtValue();
}

// Lays the initial values out byte by byte; an address becomes a relocated 64-bit field, and a
// byte of one a zero that the module's initialiser overwrites.
llvm::Constant* ModuleLowering::initial_value(const VariableDeclaration& variable, std::vector<MaskedAddress>& masked) {
  llvm::LLVMContext& context = target_.getContext();
  auto* byte = llvm::Type::getInt8Ty(context);
  auto* address_type = llvm::Type::getInt64Ty(context);
  uint64_t size = variable.size_in_bytes();
  if (variable.initializer.empty()) return llvm::ConstantAggregateZero::get(llvm::ArrayType::get(byte, size));
  uint32_t element_bytes = variable.type == ScalarType::pred ? 1 : bit_width(variable.type) / 8;
  std::vector<llvm::Constant*> fields;
  std::vector<uint8_t> pending;
  uint64_t written = 0;
  auto flush_bytes = [&] {
    if (pending.empty()) return;
    fields.push_back(llvm::ConstantDataArray::get(context, pending));
    pending.clear();
  };
  for (const InitialValue& value : variable.initializer) {
    if (value.kind == InitialValue::Kind::address) {
      llvm::Constant* base = named_address(value.symbol);
      bool masked_value = value.mask != 0;  // the checker allowed its element type
      if ((element_bytes != 8 && !masked_value) || base == nullptr) {
        diagnostics_.error(value.location, base != nullptr ? "an address needs a 64-bit element"
                                                           : "'" + value.symbol + "' cannot be used in an initialiser");
        continue;
      }
      auto* address = llvm::ConstantExpr::getGetElementPtr(byte, base, llvm::ConstantInt::get(address_type, value.offset));
      if (masked_value) {
        masked.push_back({written, element_bytes, address, value.mask});
        pending.resize(pending.size() + element_bytes, 0);
        written += element_bytes;
        continue;
      }
      flush_bytes();
      fields.push_back(llvm::ConstantExpr::getPtrToInt(address, address_type));
      written += 8;
      continue;
    }
    if (value.kind == InitialValue::Kind::integer && is_float(variable.type)) {
      diagnostics_.error(value.location, "expected a float value for ." + std::string(name_of(variable.type)));
      continue;
    }
    uint64_t bits = element_bits(value, variable.type);
    for (uint32_t i = 0; i < element_bytes; ++i) pending.push_back(static_cast<uint8_t>(i < 8 ? bits >> (8 * i) : 0));
    written += element_bytes;
  }
  pending.resize(pending.size() + (size > written ? size - written : 0), 0);
  flush_bytes();
  if (fields.size() == 1) return fields[0];
  return llvm::ConstantStruct::getAnon(context, fields, /*Packed=*/true);
}

// Defined functions carry a prefix in IR (see declare_functions), so a PTX name is looked up
// among the functions first: a table of function pointers (a vtable) names them.
llvm::Constant* ModuleLowering::named_address(const std::string& name) const {
  for (size_t index = 0; index < source_.functions.size(); ++index)
    if (source_.functions[index].name == name && functions_[index] != nullptr) return functions_[index];
  return target_.getNamedValue(name);
}

void ModuleLowering::declare_variables() {
  variables_.assign(source_.variables.size(), nullptr);
  // Declared first, initialised after, so initialisers may take any variable's address.
  for (size_t index = 0; index < source_.variables.size(); ++index) {
    const VariableDeclaration& variable = source_.variables[index];
    if (variable.space == StateSpace::shared) continue;
    if (variable.space != StateSpace::global && variable.space != StateSpace::constant) {
      diagnostics_.error(variable.location, "module-scope ." + std::string(name_of(variable.space)) +
                                                " variables are not supported yet");
      continue;
    }
    auto* type = llvm::ArrayType::get(llvm::Type::getInt8Ty(target_.getContext()), variable.size_in_bytes());
    // Never `constant`: the runtime writes .const variables (cuMemcpyHtoD to a symbol) between
    // launches, so their contents must not be folded into code.
    auto linkage = variable.is_extern ? llvm::GlobalValue::ExternalLinkage
                   : variable.is_weak ? llvm::GlobalValue::WeakAnyLinkage
                                      : llvm::GlobalValue::ExternalLinkage;
    auto* global = new llvm::GlobalVariable(target_, type, false, linkage, nullptr, variable.name);
    global->setAlignment(llvm::Align(std::max<uint32_t>(variable.effective_alignment(), 1)));
    variables_[index] = global;
  }
  std::vector<std::pair<uint32_t, MaskedAddress>> all_masked;
  for (uint32_t index = 0; index < source_.variables.size(); ++index) {
    llvm::GlobalVariable* global = variables_[index];
    const VariableDeclaration& variable = source_.variables[index];
    if (global == nullptr || variable.is_extern) continue;
    std::vector<MaskedAddress> masked;
    llvm::Constant* initial = initial_value(variable, masked);
    for (const MaskedAddress& value : masked) all_masked.emplace_back(index, value);
    if (initial->getType() == global->getValueType()) {
      global->setInitializer(initial);
      continue;
    }
    // The initialiser holds relocated addresses: the global takes the initialiser's type.
    auto* replacement = new llvm::GlobalVariable(target_, initial->getType(), false, global->getLinkage(), initial);
    replacement->setAlignment(global->getAlign());
    replacement->takeName(global);
    global->replaceAllUsesWith(replacement);
    global->eraseFromParent();
    variables_[index] = replacement;
  }
  if (!all_masked.empty()) define_initialiser(all_masked);
}

// value = (address & mask) >> (8 * the mask's byte), zero-extended to the element (as an H100
// lays out .u8, .u32 and .u64 elements so initialised).
void ModuleLowering::define_initialiser(const std::vector<std::pair<uint32_t, MaskedAddress>>& masked) {
  llvm::LLVMContext& context = target_.getContext();
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), false);
  auto* initialiser = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, intrinsics::module_initialiser, target_);
  initialiser->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", initialiser));
  for (const auto& [index, value] : masked) {
    llvm::Value* address = builder.CreatePtrToInt(value.address, builder.getInt64Ty());
    uint64_t shift = std::countr_zero(value.mask);
    llvm::Value* bits = builder.CreateLShr(builder.CreateAnd(address, value.mask), shift);
    llvm::Value* element = builder.CreateTrunc(bits, builder.getIntNTy(8 * value.element_bytes));
    builder.CreateAlignedStore(element, builder.CreateConstGEP1_64(builder.getInt8Ty(), variables_[index], value.byte_offset),
                               llvm::Align(1));
  }
  builder.CreateRetVoid();
}

void ModuleLowering::declare_functions() {
  llvm::LLVMContext& context = target_.getContext();
  auto* pointer = llvm::PointerType::get(context, 0);
  functions_.assign(source_.functions.size(), nullptr);
  std::unordered_map<std::string, llvm::Function*> by_name;
  // Definitions first so prototypes (forward declarations, .extern) resolve to them.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t index = 0; index < source_.functions.size(); ++index) {
      const Function& function = source_.functions[index];
      if (function.has_body != (pass == 0)) continue;
      if (auto found = by_name.find(function.name); found != by_name.end()) {
        functions_[index] = found->second;
        continue;
      }
      size_t pointers = function.is_entry ? 2 : 1 + function.returns.size() + function.parameters.size();
      auto* type = llvm::FunctionType::get(function_result_type(context, function), std::vector<llvm::Type*>(pointers, pointer), false);
      // Defined functions are internal and renamed so that no PTX name (say, a kernel called
      // memset) can capture a call the code generator makes to the C library.
      auto linkage = function.has_body ? llvm::GlobalValue::InternalLinkage : llvm::GlobalValue::ExternalLinkage;
      std::string name = function.has_body ? "xcuda.function." + function.name : function.name;
      auto* lowered = llvm::Function::Create(type, linkage, name, target_);
      lowered->addFnAttr(llvm::Attribute::NoUnwind);
      if (!function.has_body) lowered->addFnAttr(intrinsics::external_function_attribute);
      functions_[index] = lowered;
      by_name[function.name] = lowered;
    }
  }
}

void ModuleLowering::run() {
  declare_functions();
  declare_variables();
  llvm::NamedMDNode* kernels = target_.getOrInsertNamedMetadata(intrinsics::kernels_metadata);
  for (size_t index = 0; index < source_.functions.size(); ++index) {
    const Function& function = source_.functions[index];
    if (!function.has_body || !functions_[index]->empty()) continue;
    FunctionLowering(*this, function, functions_[index]).run();
    if (function.is_entry) {
      llvm::Metadata* fields[] = {llvm::ValueAsMetadata::get(functions_[index]), llvm::MDString::get(target_.getContext(), function.name)};
      kernels->addOperand(llvm::MDNode::get(target_.getContext(), fields));
    }
  }
  call_synchronizing_targets_directly(target_);
}

void inline_single_use_helpers(llvm::Module& module) {
  std::vector<llvm::Function*> helpers;
  for (llvm::Function& function : module)
    if (function.hasFnAttribute(helper_attribute) && function.hasOneUse()) helpers.push_back(&function);
  for (llvm::Function* helper : helpers) {
    if (auto* call = llvm::dyn_cast<llvm::CallBase>(helper->user_back()); call && call->getCalledFunction() == helper) {
      llvm::InlineFunctionInfo info;
      if (llvm::InlineFunction(*call, info).isSuccess()) helper->eraseFromParent();
    }
  }
}

llvm::Type* function_result_type(llvm::LLVMContext& context, const Function& function) {
  if (function.has_body && !function.is_entry) return llvm::Type::getInt1Ty(context);
  return llvm::Type::getVoidTy(context);
}

std::unique_ptr<llvm::Module> lower_module(const Module& module, const SharedLayout& shared,
                                           llvm::LLVMContext& context, DiagnosticSink& diagnostics) {
  auto lowered = std::make_unique<llvm::Module>("ptx", context);
  ModuleLowering(module, shared, *lowered, diagnostics).run();
  return lowered;
}

}  // namespace xcuda::ptx
