#include "lower/floating_point.h"

#include <cmath>

#include <llvm/IR/Intrinsics.h>

#include "lower/intrinsics.h"
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
  std::string helper_name = std::string(intrinsics::rounded_helper_prefix) + std::string(name) + "." + std::string(rounding_name(rounding));
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
  llvm::Type* element = value->getType()->getScalarType();
  if (!element->isFloatTy() && !element->isHalfTy()) return value;
  return flush_below(lowering, value, element->isHalfTy() ? 0x1p-14 : 0x1p-126);
}

llvm::Value* flush_below(FunctionLowering& lowering, llvm::Value* value, double smallest_normal_value) {
  llvm::Type* type = value->getType();
  auto& builder = lowering.builder();
  llvm::Value* magnitude = builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, value);
  llvm::Value* smallest_normal = llvm::ConstantFP::get(type, smallest_normal_value);
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

ScalarType bits_of_width(uint32_t bits) {
  switch (bits) {
    case 8: return ScalarType::b8;
    case 16: return ScalarType::b16;
    case 32: return ScalarType::b32;
    default: return ScalarType::b64;
  }
}

const NarrowFormat f16_format{5, 10, 15, 0x3ff, true, true, 0x7fff, 16, 0};
const NarrowFormat bf16_format{8, 7, 127, 0x7f, true, true, 0x7fff, 16, 0};
const NarrowFormat tf32_format{8, 10, 127, 0x3ff, true, true, 0x7fffe000, 32, 13};
const NarrowFormat e4m3_format{4, 3, 8, 0x6, false, true, 0x7f, 8, 0};
const NarrowFormat e5m2_format{5, 2, 15, 0x3, true, true, 0x7f, 8, 0};
// e3m2, e2m3 and e2m1 have no NaN: cvt.satfinite turns a NaN into +MAX_NORM (PTX ISA, cvt).
const NarrowFormat e3m2_format{3, 2, 4, 0x3, false, false, 0x1f, 8, 0};
const NarrowFormat e2m3_format{2, 3, 2, 0x7, false, false, 0x1f, 8, 0};
const NarrowFormat e2m1_format{2, 1, 2, 0x1, false, false, 0x7, 4, 0};

namespace {

// `element` in the shape of `like`: itself for scalars, a vector of as many lanes for vectors.
llvm::Type* shaped(llvm::Type* like, llvm::Type* element) {
  if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(like)) return llvm::FixedVectorType::get(element, vector->getNumElements());
  return element;
}

int bias_of(const NarrowFormat& format) { return (1 << (format.exponent_bits - 1)) - 1; }

llvm::Intrinsic::ID rounding_intrinsic(Rounding rounding) {
  switch (rounding) {
    case Rounding::rz: return llvm::Intrinsic::trunc;
    case Rounding::rm: return llvm::Intrinsic::floor;
    case Rounding::rp: return llvm::Intrinsic::ceil;
    case Rounding::rna: return llvm::Intrinsic::round;
    default: return llvm::Intrinsic::roundeven;
  }
}

}  // namespace

// The value is scaled by a power of two so that the format's last fraction bit has weight 1,
// rounded to an integer in the requested direction and scaled back, all exactly in f64; the
// rounded magnitude, now representable, is then re-encoded from its f32 bits.
llvm::Value* round_to_narrow(FunctionLowering& lowering, llvm::Value* value, const NarrowFormat& format,
                             NarrowRounding mode) {
  auto& builder = lowering.builder();
  llvm::Type* real = shaped(value->getType(), builder.getDoubleTy());
  llvm::Type* wide = shaped(value->getType(), builder.getInt64Ty());
  llvm::Type* word = shaped(value->getType(), builder.getInt32Ty());
  llvm::Type* stored = shaped(value->getType(), builder.getIntNTy(format.storage_bits));
  auto real_constant = [&](double constant) { return llvm::ConstantFP::get(real, constant); };
  auto wide_constant = [&](int64_t constant) { return llvm::ConstantInt::get(wide, static_cast<uint64_t>(constant)); };
  auto word_constant = [&](uint32_t constant) { return llvm::ConstantInt::get(word, constant); };
  const int fraction_bits = format.fraction_bits;
  const int bias = bias_of(format);
  const int smallest_exponent = 1 - bias;
  const double largest = std::ldexp(1.0 + std::ldexp(static_cast<double>(format.largest_fraction), -fraction_bits),
                                    format.largest_exponent);

  // x86 has no bf16 conversions of its own; bf16 widens to f32 by a shift.
  if (value->getType()->getScalarType()->isBFloatTy()) value = widen_half(lowering, value);
  llvm::Value* x = builder.CreateFPCast(value, real);
  llvm::Value* bits = builder.CreateBitCast(x, wide);
  llvm::Value* exponent = builder.CreateSub(builder.CreateAnd(builder.CreateLShr(bits, 52), 0x7ff), wide_constant(1023));
  exponent = builder.CreateBinaryIntrinsic(llvm::Intrinsic::smax, exponent, wide_constant(smallest_exponent));
  exponent = builder.CreateBinaryIntrinsic(llvm::Intrinsic::smin, exponent, wide_constant(format.largest_exponent + 1));
  auto power_of_two = [&](llvm::Value* field) { return builder.CreateBitCast(builder.CreateShl(field, 52), real); };
  llvm::Value* down = power_of_two(builder.CreateSub(wide_constant(fraction_bits + 1023), exponent));
  llvm::Value* up = power_of_two(builder.CreateAdd(exponent, wide_constant(1023 - fraction_bits)));
  llvm::Value* scaled = builder.CreateFMul(x, down);
  llvm::Value* integral;
  llvm::Value* carry = nullptr;  // .rs: whether the rounding went away from zero
  if (mode.random_bits) {
    llvm::Value* truncated = builder.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, scaled);
    llvm::Value* discarded = builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, builder.CreateFSub(scaled, truncated));
    // The top bits of what is discarded, exactly (the saturating conversion makes an infinite
    // input's NaN difference 0).
    llvm::Value* window = builder.CreateIntrinsic(llvm::Intrinsic::fptoui_sat, {wide, real},
                                                  {builder.CreateFMul(discarded, real_constant(std::ldexp(1.0, mode.random_width)))});
    llvm::Value* sum = builder.CreateAdd(window, builder.CreateZExt(mode.random_bits, wide));
    carry = builder.CreateICmpUGE(sum, wide_constant(int64_t{1} << mode.random_width));
    llvm::Value* unit = builder.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, real_constant(1.0), scaled);
    integral = builder.CreateFAdd(truncated, builder.CreateSelect(carry, unit, real_constant(0.0)));
  } else {
    integral = builder.CreateUnaryIntrinsic(rounding_intrinsic(mode.rounding), scaled);
  }
  llvm::Value* magnitude = builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, builder.CreateFMul(integral, up));
  llvm::Value* negative = builder.CreateICmpSLT(bits, wide_constant(0));

  llvm::Value* single_bits = builder.CreateBitCast(builder.CreateFPTrunc(magnitude, shaped(real, builder.getFloatTy())), word);
  llvm::Value* normal = builder.CreateSub(builder.CreateLShr(single_bits, static_cast<uint64_t>(23 - fraction_bits)),
                                          word_constant(static_cast<uint32_t>(127 - bias) << fraction_bits));
  llvm::Value* subnormal = builder.CreateIntrinsic(
      llvm::Intrinsic::fptoui_sat, {word, real},
      {builder.CreateFMul(magnitude, real_constant(std::ldexp(1.0, fraction_bits - smallest_exponent)))});
  llvm::Value* code = builder.CreateSelect(builder.CreateFCmpOGE(magnitude, real_constant(std::ldexp(1.0, smallest_exponent))),
                                           normal, subnormal);

  // Beyond the largest finite value: infinity, unless the rounding direction points towards
  // zero, .satfinite asks for the largest value, or the format has no infinity. An infinite
  // input is no overflow and stays infinite without .satfinite.
  bool always_largest = mode.satfinite || (!carry && mode.rounding == Rounding::rz) || !format.has_infinity;
  llvm::Value* to_largest = carry && !always_largest                            ? builder.CreateNot(carry)
                            : mode.rounding == Rounding::rm && !always_largest ? builder.CreateNot(negative)
                            : mode.rounding == Rounding::rp && !always_largest
                                ? negative
                                : llvm::ConstantInt::get(negative->getType(), always_largest);
  if (!mode.satfinite && format.has_infinity) {
    llvm::Value* infinite = builder.CreateFCmpOEQ(builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), real_constant(INFINITY));
    to_largest = builder.CreateAnd(to_largest, builder.CreateNot(infinite));
  }
  const uint32_t largest_code = (static_cast<uint32_t>(format.largest_exponent + bias) << fraction_bits) |
                                static_cast<uint32_t>(format.largest_fraction);
  const uint32_t infinity_code = ((1u << format.exponent_bits) - 1) << fraction_bits;
  code = builder.CreateSelect(builder.CreateFCmpOGT(magnitude, real_constant(largest)),
                              builder.CreateSelect(to_largest, word_constant(largest_code), word_constant(infinity_code)), code);
  llvm::Value* sign = word_constant(1u << (format.exponent_bits + fraction_bits));
  code = builder.CreateOr(code, builder.CreateSelect(negative, sign, word_constant(0)));
  if (mode.relu) code = builder.CreateSelect(negative, word_constant(0), code);
  code = builder.CreateShl(code, format.low_bits);
  llvm::Value* nan = word_constant(format.nan);
  if (mode.nan == NanRule::keep_payload) {
    const uint32_t quiet = infinity_code | 1u << (fraction_bits - 1);
    llvm::Value* payload = builder.CreateTrunc(builder.CreateLShr(builder.CreateAnd(bits, (uint64_t{1} << 52) - 1),
                                                                  static_cast<uint64_t>(52 - fraction_bits)),
                                               word);
    nan = builder.CreateOr(builder.CreateOr(builder.CreateSelect(negative, sign, word_constant(0)), word_constant(quiet)), payload);
    nan = builder.CreateShl(nan, format.low_bits);
  } else if (mode.nan == NanRule::truncate_bits) {
    nan = builder.CreateAnd(builder.CreateBitCast(value, word), ~((1u << (23 - fraction_bits)) - 1));
    // .satfinite saturates the cut bits as an integer: a magnitude at or above infinity's drops
    // by one unit of the last place, so a NaN stays a NaN one step lower, or becomes the largest
    // finite value when its payload lay only in the cut bits (0x7fc00000 -> 0x7fbfe000,
    // 0x7f800001 -> 0x7f7fe000 on an H200).
    if (mode.satfinite) nan = builder.CreateSub(nan, word_constant(1u << (23 - fraction_bits)));
  }
  code = builder.CreateSelect(builder.CreateFCmpUNO(x, x), nan, code);
  return builder.CreateZExtOrTrunc(code, stored);
}

llvm::Value* widen_from_narrow(llvm::IRBuilder<>& builder, llvm::Value* bits, const NarrowFormat& format) {
  llvm::Type* word = shaped(bits->getType(), builder.getInt32Ty());
  llvm::Type* single = shaped(bits->getType(), builder.getFloatTy());
  auto word_constant = [&](uint32_t constant) { return llvm::ConstantInt::get(word, constant); };
  const int fraction_bits = format.fraction_bits;
  const int bias = bias_of(format);
  const uint32_t exponent_mask = (1u << format.exponent_bits) - 1;
  llvm::Value* code = builder.CreateZExt(bits, word);
  llvm::Value* exponent = builder.CreateAnd(builder.CreateLShr(code, static_cast<uint64_t>(fraction_bits)), exponent_mask);
  llvm::Value* fraction = builder.CreateAnd(code, (1u << fraction_bits) - 1);
  llvm::Value* normal = builder.CreateBitCast(
      builder.CreateOr(builder.CreateShl(builder.CreateAdd(exponent, word_constant(static_cast<uint32_t>(127 - bias))), 23),
                       builder.CreateShl(fraction, static_cast<uint64_t>(23 - fraction_bits))),
      single);
  llvm::Value* subnormal = builder.CreateFMul(builder.CreateUIToFP(fraction, single),
                                              llvm::ConstantFP::get(single, std::ldexp(1.0, 1 - bias - fraction_bits)));
  llvm::Value* magnitude = builder.CreateSelect(builder.CreateICmpEQ(exponent, word_constant(0)), subnormal, normal);
  llvm::Value* top = builder.CreateICmpEQ(exponent, word_constant(exponent_mask));
  if (format.has_infinity) {
    magnitude = builder.CreateSelect(top, llvm::ConstantFP::get(single, INFINITY), magnitude);
    magnitude = builder.CreateSelect(builder.CreateAnd(top, builder.CreateICmpNE(fraction, word_constant(0))),
                                     canonical_nan(single), magnitude);
  } else if (format.has_nan) {
    // e4m3 spends only the all-ones code on NaN and uses the rest of the top exponent for numbers.
    llvm::Value* all_ones = builder.CreateAnd(top, builder.CreateICmpEQ(fraction, word_constant((1u << fraction_bits) - 1)));
    magnitude = builder.CreateSelect(all_ones, canonical_nan(single), magnitude);
  }
  llvm::Value* negative = builder.CreateICmpNE(builder.CreateAnd(code, 1u << (format.exponent_bits + fraction_bits)), word_constant(0));
  return builder.CreateSelect(negative, builder.CreateFNeg(magnitude), magnitude);
}

bool is_half_type(ScalarType type) {
  return type == ScalarType::f16 || type == ScalarType::bf16 || type == ScalarType::f16x2 || type == ScalarType::bf16x2;
}

llvm::Value* widen_half(FunctionLowering& lowering, llvm::Value* value) {
  auto& builder = lowering.builder();
  llvm::Type* single = shaped(value->getType(), builder.getFloatTy());
  if (value->getType()->getScalarType()->isHalfTy()) return builder.CreateFPExt(value, single);
  // bf16 is the upper half of an f32.
  llvm::Value* bits = builder.CreateBitCast(value, shaped(value->getType(), builder.getInt16Ty()));
  llvm::Value* word = builder.CreateShl(builder.CreateZExt(bits, shaped(value->getType(), builder.getInt32Ty())), 16);
  return builder.CreateBitCast(word, single);
}

llvm::Value* narrow_half(FunctionLowering& lowering, llvm::Value* value, ScalarType type, NarrowRounding rounding) {
  bool brain = type == ScalarType::bf16 || type == ScalarType::bf16x2;
  llvm::Value* bits = round_to_narrow(lowering, value, brain ? bf16_format : f16_format, rounding);
  return lowering.builder().CreateBitCast(bits, arithmetic_type(lowering, type));
}

llvm::Type* arithmetic_type(FunctionLowering& lowering, ScalarType type) {
  auto& builder = lowering.builder();
  if (type == ScalarType::f16x2) return llvm::FixedVectorType::get(builder.getHalfTy(), 2);
  if (type == ScalarType::bf16x2) return llvm::FixedVectorType::get(builder.getBFloatTy(), 2);
  if (type == ScalarType::f32x2) return llvm::FixedVectorType::get(builder.getFloatTy(), 2);
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
