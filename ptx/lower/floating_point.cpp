#include "lower/floating_point.h"

#include <llvm/IR/Intrinsics.h>

#include "lower/module_lowering.h"

namespace xcuda::ptx {
namespace {

// llvm.set.rounding's encoding (the FLT_ROUNDS values).
int rounding_mode_code(Rounding rounding) {
  switch (rounding) {
    case Rounding::rz: return 0;
    case Rounding::rp: return 2;
    case Rounding::rm: return 3;
    default: return 1;
  }
}

std::string_view rounding_name(Rounding rounding) {
  switch (rounding) {
    case Rounding::rz: return "rz";
    case Rounding::rp: return "rp";
    case Rounding::rm: return "rm";
    default: return "rn";
  }
}

std::string type_suffix(llvm::Type* type) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  type->print(stream);
  for (char& c : text)
    if (c == ' ' || c == '<' || c == '>') c = '_';
  return text;
}

}  // namespace

llvm::Value* with_rounding(FunctionLowering& lowering, Rounding rounding, std::string_view name,
                           llvm::ArrayRef<llvm::Value*> arguments, llvm::Type* result, const FloatOperation& operation) {
  auto& builder = lowering.builder();
  if (rounding == Rounding::none || rounding == Rounding::rn) return operation(builder, arguments);
  llvm::Module& module = lowering.module().target();
  std::string helper_name = "xcuda.rounded." + std::string(name) + "." + std::string(rounding_name(rounding));
  for (llvm::Value* argument : arguments) helper_name += "." + type_suffix(argument->getType());
  helper_name += "." + type_suffix(result);
  llvm::Function* helper = module.getFunction(helper_name);
  if (helper == nullptr) {
    std::vector<llvm::Type*> parameter_types;
    for (llvm::Value* argument : arguments) parameter_types.push_back(argument->getType());
    auto* type = llvm::FunctionType::get(result, parameter_types, false);
    helper = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, helper_name, module);
    helper->addFnAttr(llvm::Attribute::StrictFP);
    helper->addFnAttr(llvm::Attribute::NoUnwind);
    helper->addFnAttr(llvm::Attribute::NoInline);
    llvm::IRBuilder<> body(llvm::BasicBlock::Create(module.getContext(), "entry", helper));
    body.setIsFPConstrained(true);
    body.setDefaultConstrainedRounding(llvm::RoundingMode::Dynamic);
    body.setDefaultConstrainedExcept(llvm::fp::ebIgnore);
    auto* saved = body.CreateIntrinsic(llvm::Intrinsic::get_rounding, {}, {});
    body.CreateIntrinsic(llvm::Intrinsic::set_rounding, {}, {body.getInt32(rounding_mode_code(rounding))});
    std::vector<llvm::Value*> parameters;
    for (auto& argument : helper->args()) parameters.push_back(&argument);
    llvm::Value* value = operation(body, parameters);
    body.CreateIntrinsic(llvm::Intrinsic::set_rounding, {}, {saved});
    body.CreateRet(value);
  }
  return builder.CreateCall(helper, arguments);
}

llvm::Value* flush_subnormal(FunctionLowering& lowering, llvm::Value* value) {
  llvm::Type* type = value->getType();
  if (!type->getScalarType()->isFloatTy()) return value;
  auto& builder = lowering.builder();
  llvm::Value* magnitude = builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, value);
  llvm::Value* smallest_normal = llvm::ConstantFP::get(type, 0x1p-126);
  llvm::Value* is_subnormal = builder.CreateFCmpOLT(magnitude, smallest_normal);
  llvm::Value* zero = builder.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, llvm::ConstantFP::get(type, 0.0), value);
  return builder.CreateSelect(is_subnormal, zero, value);
}

llvm::Value* saturate_float(FunctionLowering& lowering, llvm::Value* value) {
  auto& builder = lowering.builder();
  llvm::Type* type = value->getType();
  llvm::Value* zero = llvm::ConstantFP::get(type, 0.0);
  llvm::Value* one = llvm::ConstantFP::get(type, 1.0);
  llvm::Value* positive = builder.CreateSelect(builder.CreateFCmpOGT(value, zero), value, zero);
  return builder.CreateSelect(builder.CreateFCmpOLT(positive, one), positive, one);
}

llvm::Value* canonical_nan(llvm::Type* type) {
  const auto& semantics = type->getScalarType()->getFltSemantics();
  llvm::APInt bits = llvm::APInt::getAllOnes(llvm::APFloat::getSizeInBits(semantics));
  bits.clearSignBit();
  return llvm::ConstantFP::get(type, llvm::APFloat(semantics, bits));
}

llvm::Value* canonicalize_nan(FunctionLowering& lowering, llvm::Value* value) {
  if (value->getType()->getScalarType()->isDoubleTy()) return value;
  auto& builder = lowering.builder();
  return builder.CreateSelect(builder.CreateFCmpUNO(value, value), canonical_nan(value->getType()), value);
}

llvm::Type* arithmetic_type(FunctionLowering& lowering, ScalarType type) {
  auto& builder = lowering.builder();
  if (type == ScalarType::f16x2) return llvm::FixedVectorType::get(builder.getHalfTy(), 2);
  if (type == ScalarType::bf16x2) return llvm::FixedVectorType::get(builder.getBFloatTy(), 2);
  return lowering.type_of(type);
}

llvm::Value* read_float(FunctionLowering& lowering, const Operand& operand, ScalarType type, bool flush) {
  llvm::Value* value = lowering.read(operand, type);
  llvm::Type* arithmetic = arithmetic_type(lowering, type);
  if (value->getType() != arithmetic) value = lowering.builder().CreateBitCast(value, arithmetic);
  return flush ? flush_subnormal(lowering, value) : value;
}

void write_float(FunctionLowering& lowering, const Operand& operand, llvm::Value* value, ScalarType type, bool flush) {
  if (flush) value = flush_subnormal(lowering, value);
  llvm::Type* stored = lowering.type_of(type);
  if (value->getType() != stored) value = lowering.builder().CreateBitCast(value, stored);
  lowering.write(operand, value, type);
}

}  // namespace xcuda::ptx
