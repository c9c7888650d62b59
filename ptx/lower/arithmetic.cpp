// Integer and floating-point arithmetic: add sub mul mad fma div rem abs neg min max sad, the
// carry chain (add.cc, addc), dp4a dp2a, and the float functions rcp sqrt rsqrt sin cos lg2 ex2
// tanh, on f16/bf16 and their packed pairs too.
#include <cmath>

#include <llvm/IR/Intrinsics.h>

#include "lower/floating_point.h"
#include "lower/instruction_lowering.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {
namespace {

using llvm::Value;

ScalarType type_of_instruction(const Instruction& instruction) { return instruction.qualifiers.types[0]; }

bool flushes(const Instruction& instruction) { return instruction.qualifiers.ftz; }

// The integer type of a float type's width, vector for vector.
llvm::Type* shaped_integer(llvm::Type* type) {
  if (auto* vector = llvm::dyn_cast<llvm::VectorType>(type)) return llvm::VectorType::getInteger(vector);
  return llvm::IntegerType::get(type->getContext(), static_cast<unsigned>(type->getPrimitiveSizeInBits().getFixedValue()));
}

// .ftz flushes a result that is tiny after rounding to the format's precision with an unbounded
// exponent (measured on an H200: a product just below the smallest normal that rounds up to it is
// kept by fma and flushed by mul when it is exactly representable one binade lower). Those are
// the exact values below the midpoint between the smallest normal and its predecessor.
double tiny_limit(double smallest_normal, int precision) { return smallest_normal * (1 - std::ldexp(1.0, -precision - 1)); }

bool is_wide_float(Value* value) {
  llvm::Type* element = value->getType()->getScalarType();
  return element->isFloatTy() || element->isDoubleTy();
}

// Finishes a computed float result: saturation, the GPU's NaN, flushing, then the store. A
// 16-bit float result arrives computed in f32 or f64 and is rounded here, once.
void write_float_result(FunctionLowering& lowering, const Instruction& instruction, Value* value) {
  ScalarType type = type_of_instruction(instruction);
  if (instruction.qualifiers.saturate) value = saturate_float(lowering, value);
  if (is_half_type(type) && is_wide_float(value)) {
    bool brain = type == ScalarType::bf16 || type == ScalarType::bf16x2;
    if (flushes(instruction)) value = flush_below(lowering, value, tiny_limit(brain ? 0x1p-126 : 0x1p-14, brain ? 8 : 11));
    value = narrow_half(lowering, value, type, {Rounding::rn, false, has_word(instruction, "relu"), NanRule::canonical});
  } else if (is_wide_float(value))
    value = canonicalize_nan(lowering, value);
  write_float(lowering, instruction.operands[0], value, type, flushes(instruction));
}

// Finishes abs, neg and copysign, which only touch the sign bit.
void write_sign_result(FunctionLowering& lowering, const Instruction& instruction, Value* value) {
  write_float(lowering, instruction.operands[0], value, type_of_instruction(instruction), flushes(instruction));
}

std::vector<Value*> float_sources(FunctionLowering& lowering, const Instruction& instruction) {
  std::vector<Value*> sources;
  for (size_t i = 1; i < instruction.operands.size(); ++i)
    sources.push_back(read_float(lowering, instruction.operands[i], type_of_instruction(instruction), flushes(instruction)));
  return sources;
}

// The sources as arithmetic computes them: 16-bit floats widened to f32.
std::vector<Value*> computing_sources(FunctionLowering& lowering, const Instruction& instruction) {
  auto sources = float_sources(lowering, instruction);
  if (is_half_type(type_of_instruction(instruction)))
    for (Value*& source : sources) source = widen_half(lowering, source);
  return sources;
}

std::vector<Value*> integer_sources(FunctionLowering& lowering, const Instruction& instruction, size_t count) {
  std::vector<Value*> sources;
  for (size_t i = 1; i <= count; ++i) sources.push_back(lowering.read(instruction.operands[i], type_of_instruction(instruction)));
  return sources;
}

// An f64 add, sub, mul or fma with NaN operands gives one of them, quieted (measured on an H200):
// b before a, and for fma b before c before a. x86 gives the first. `sources` lists them from the
// least to the most preferred.
Value* propagate_f64_nan(FunctionLowering& lowering, llvm::ArrayRef<Value*> sources, Value* result) {
  if (!result->getType()->isDoubleTy()) return result;
  auto& builder = lowering.builder();
  // One quieting and one choice for the whole operation rather than one per source: each f64
  // operation pays for them, and f64 kernels were a third bigger for it.
  Value* chosen = sources.front();
  Value* any_nan = builder.CreateFCmpUNO(chosen, chosen);
  for (Value* source : sources.drop_front()) {
    Value* nan = builder.CreateFCmpUNO(source, source);
    chosen = builder.CreateSelect(nan, source, chosen);
    any_nan = builder.CreateOr(any_nan, nan);
  }
  Value* quieted = builder.CreateBitCast(builder.CreateOr(builder.CreateBitCast(chosen, builder.getInt64Ty()), uint64_t{1} << 51),
                                         result->getType());
  return builder.CreateSelect(any_nan, quieted, result);
}

// .ftz on an f32 product decides on the exact product, which f64 holds.
Value* flush_tiny_product(FunctionLowering& lowering, const Instruction& instruction, llvm::ArrayRef<Value*> sources, Value* result) {
  if (!flushes(instruction) || !result->getType()->isFloatTy()) return result;
  auto& builder = lowering.builder();
  Value* exact = builder.CreateFMul(builder.CreateFPExt(sources[0], builder.getDoubleTy()), builder.CreateFPExt(sources[1], builder.getDoubleTy()));
  Value* tiny = builder.CreateFCmpOLT(builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, exact),
                                      llvm::ConstantFP::get(exact->getType(), tiny_limit(0x1p-126, 24)));
  Value* zero = builder.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, llvm::ConstantFP::get(result->getType(), 0.0), result);
  return builder.CreateSelect(tiny, zero, result);
}

void lower_float_binary(FunctionLowering& lowering, const Instruction& instruction, std::string_view name,
                        llvm::Instruction::BinaryOps operation) {
  auto sources = computing_sources(lowering, instruction);
  Value* result = with_rounding(lowering, instruction.qualifiers.rounding, name, sources, sources[0]->getType(),
                                [operation](llvm::IRBuilder<>& builder, llvm::ArrayRef<Value*> arguments) {
                                  return builder.CreateBinOp(operation, arguments[0], arguments[1]);
                                });
  if (operation == llvm::Instruction::FMul) result = flush_tiny_product(lowering, instruction, sources, result);
  // div keeps x86's choice, a before b (measured).
  if (operation != llvm::Instruction::FDiv) result = propagate_f64_nan(lowering, sources, result);
  write_float_result(lowering, instruction, result);
}

// .s16x2 and .u16x2: two 16-bit integers side by side, each its own lane (add, min, max).
bool is_packed_integer(ScalarType type) { return type == ScalarType::s16x2 || type == ScalarType::u16x2; }

// The packed lanes of each source, as <2 x i16>.
std::vector<Value*> packed_integer_sources(FunctionLowering& lowering, const Instruction& instruction, size_t count) {
  auto& builder = lowering.builder();
  auto* lanes = llvm::FixedVectorType::get(builder.getInt16Ty(), 2);
  std::vector<Value*> sources = integer_sources(lowering, instruction, count);
  for (Value*& source : sources) source = builder.CreateBitCast(source, lanes);
  return sources;
}

void write_packed_integer(FunctionLowering& lowering, const Instruction& instruction, Value* lanes) {
  lowering.write(instruction.operands[0], lowering.builder().CreateBitCast(lanes, lowering.builder().getInt32Ty()), ScalarType::b32);
}

// add.cc/addc and sub.cc/subc: the carry (or borrow) flag lives in one i1 per function.
void lower_add_or_subtract(FunctionLowering& lowering, const Instruction& instruction, bool subtract, bool with_carry_in) {
  ScalarType type = type_of_instruction(instruction);
  if (is_float(type)) {
    lower_float_binary(lowering, instruction, subtract ? "fsub" : "fadd",
                       subtract ? llvm::Instruction::FSub : llvm::Instruction::FAdd);
    return;
  }
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  if (is_packed_integer(type)) {
    if (subtract || with_carry_in || qualifiers.carry_out || qualifiers.saturate) {
      lowering.error(instruction.location, "with .s16x2 or .u16x2, only add without .sat and .cc");
      return;
    }
    auto lanes = packed_integer_sources(lowering, instruction, 2);
    write_packed_integer(lowering, instruction, builder.CreateAdd(lanes[0], lanes[1]));
    return;
  }
  auto sources = integer_sources(lowering, instruction, 2);
  if (qualifiers.saturate) {
    auto intrinsic = subtract ? llvm::Intrinsic::ssub_sat : llvm::Intrinsic::sadd_sat;
    lowering.write(instruction.operands[0], builder.CreateBinaryIntrinsic(intrinsic, sources[0], sources[1]), type);
    return;
  }
  if (!with_carry_in && !qualifiers.carry_out) {
    Value* result = subtract ? builder.CreateSub(sources[0], sources[1]) : builder.CreateAdd(sources[0], sources[1]);
    lowering.write(instruction.operands[0], result, type);
    return;
  }
  auto overflow = subtract ? llvm::Intrinsic::usub_with_overflow : llvm::Intrinsic::uadd_with_overflow;
  Value* first = builder.CreateBinaryIntrinsic(overflow, sources[0], sources[1]);
  Value* result = builder.CreateExtractValue(first, 0);
  Value* carry = builder.CreateExtractValue(first, 1);
  if (with_carry_in) {
    Value* carry_in = builder.CreateZExt(builder.CreateLoad(builder.getInt1Ty(), lowering.carry_flag()), result->getType());
    Value* second = builder.CreateBinaryIntrinsic(overflow, result, carry_in);
    result = builder.CreateExtractValue(second, 0);
    carry = builder.CreateOr(carry, builder.CreateExtractValue(second, 1));
  }
  if (qualifiers.carry_out) builder.CreateStore(carry, lowering.carry_flag());
  lowering.write(instruction.operands[0], result, type);
}

void lower_add(FunctionLowering& lowering, const Instruction& instruction) { lower_add_or_subtract(lowering, instruction, false, false); }
void lower_sub(FunctionLowering& lowering, const Instruction& instruction) { lower_add_or_subtract(lowering, instruction, true, false); }
void lower_addc(FunctionLowering& lowering, const Instruction& instruction) { lower_add_or_subtract(lowering, instruction, false, true); }
void lower_subc(FunctionLowering& lowering, const Instruction& instruction) { lower_add_or_subtract(lowering, instruction, true, true); }

// The product of a and b as .lo/.hi/.wide ask: low half, high half, or the full double width.
Value* integer_product(FunctionLowering& lowering, const Instruction& instruction, Value* a, Value* b) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  if (!qualifiers.high && !qualifiers.wide) return builder.CreateMul(a, b);
  bool is_signed_type = is_signed(type_of_instruction(instruction));
  uint32_t bits = a->getType()->getIntegerBitWidth();
  llvm::Type* wide = lowering.integer_type(bits * 2);
  Value* product = builder.CreateMul(builder.CreateIntCast(a, wide, is_signed_type), builder.CreateIntCast(b, wide, is_signed_type));
  if (qualifiers.wide) return product;
  return builder.CreateTrunc(builder.CreateLShr(product, bits), a->getType());
}

ScalarType product_type(const Instruction& instruction) {
  ScalarType type = type_of_instruction(instruction);
  if (!instruction.qualifiers.wide) return type;
  switch (type) {
    case ScalarType::s16: return ScalarType::s32;
    case ScalarType::s32: return ScalarType::s64;
    case ScalarType::u16: return ScalarType::u32;
    default: return ScalarType::u64;
  }
}

void lower_mul(FunctionLowering& lowering, const Instruction& instruction) {
  if (is_float(type_of_instruction(instruction))) {
    lower_float_binary(lowering, instruction, "fmul", llvm::Instruction::FMul);
    return;
  }
  auto sources = integer_sources(lowering, instruction, 2);
  lowering.write(instruction.operands[0], integer_product(lowering, instruction, sources[0], sources[1]), product_type(instruction));
}

// a + b rounded to odd: exact when it fits f64, else the neighbour with an odd last bit. A
// second rounding to a format at least two bits narrower is then correctly rounded.
Value* add_rounded_to_odd(llvm::IRBuilder<>& builder, Value* a, Value* b) {
  // TwoSum: sum + error == a + b exactly.
  Value* sum = builder.CreateFAdd(a, b);
  Value* b_part = builder.CreateFSub(sum, a);
  Value* a_part = builder.CreateFSub(sum, b_part);
  Value* error = builder.CreateFAdd(builder.CreateFSub(a, a_part), builder.CreateFSub(b, b_part));
  llvm::Type* integer = llvm::VectorType::getInteger(llvm::cast<llvm::VectorType>(sum->getType()));
  Value* sum_bits = builder.CreateBitCast(sum, integer);
  Value* error_bits = builder.CreateBitCast(error, integer);
  Value* one = llvm::ConstantInt::get(integer, 1);
  Value* zero = llvm::Constant::getNullValue(integer);
  // Moving the bits by one ulp goes away from zero when error and sum share a sign.
  Value* same_sign = builder.CreateICmpSGE(builder.CreateXor(sum_bits, error_bits), zero);
  Value* neighbour = builder.CreateSelect(same_sign, builder.CreateAdd(sum_bits, one), builder.CreateSub(sum_bits, one));
  Value* inexact = builder.CreateAnd(builder.CreateFCmpONE(error, llvm::ConstantFP::get(error->getType(), 0.0)),
                                     builder.CreateICmpEQ(builder.CreateAnd(sum_bits, one), zero));
  return builder.CreateBitCast(builder.CreateSelect(inexact, neighbour, sum_bits), sum->getType());
}

// fma on 16-bit floats: the product is exact in f64, the sum is rounded to odd, and the result
// is rounded once more, correctly, to the 16-bit format. .oob makes an operand holding the
// out-of-bounds NaN 0x7FFF give +0.
void lower_half_fma(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  auto originals = float_sources(lowering, instruction);
  std::vector<Value*> wide;
  llvm::Type* real = nullptr;
  for (Value* source : originals) {
    Value* single = widen_half(lowering, source);
    real = single->getType()->isVectorTy() ? llvm::FixedVectorType::get(builder.getDoubleTy(), 2) : builder.getDoubleTy();
    wide.push_back(builder.CreateFPExt(single, real));
  }
  // Vectors keep the helper generic; scalars travel as one-lane vectors.
  if (!real->isVectorTy()) {
    for (Value*& value : wide) value = builder.CreateInsertElement(llvm::PoisonValue::get(llvm::FixedVectorType::get(real, 1)), value, uint64_t{0});
  }
  Value* result = add_rounded_to_odd(builder, builder.CreateFMul(wide[0], wide[1]), wide[2]);
  if (!real->isVectorTy()) result = builder.CreateExtractElement(result, uint64_t{0});
  if (has_word(instruction, "oob")) {
    llvm::Type* integer = shaped_integer(originals[0]->getType());
    Value* out_of_bounds = nullptr;
    for (Value* source : originals) {
      Value* marked = builder.CreateICmpEQ(builder.CreateBitCast(source, integer), llvm::ConstantInt::get(integer, 0x7fff));
      out_of_bounds = out_of_bounds == nullptr ? marked : builder.CreateOr(out_of_bounds, marked);
    }
    result = builder.CreateSelect(out_of_bounds, llvm::ConstantFP::get(result->getType(), 0.0), result);
  }
  write_float_result(lowering, instruction, result);
}

void lower_fma(FunctionLowering& lowering, const Instruction& instruction) {
  if (is_half_type(type_of_instruction(instruction))) {
    lower_half_fma(lowering, instruction);
    return;
  }
  auto sources = float_sources(lowering, instruction);
  Value* result = with_rounding(lowering, instruction.qualifiers.rounding, "fma", sources, sources[0]->getType(),
                                [](llvm::IRBuilder<>& builder, llvm::ArrayRef<Value*> arguments) {
                                  if (builder.getIsFPConstrained())
                                    return static_cast<Value*>(builder.CreateConstrainedFPCall(
                                        llvm::Intrinsic::getDeclaration(builder.GetInsertBlock()->getModule(),
                                                                        llvm::Intrinsic::experimental_constrained_fma,
                                                                        {arguments[0]->getType()}),
                                        arguments));
                                  return static_cast<Value*>(builder.CreateIntrinsic(llvm::Intrinsic::fma, {arguments[0]->getType()}, arguments));
                                });
  write_float_result(lowering, instruction, propagate_f64_nan(lowering, {sources[0], sources[2], sources[1]}, result));
}

// mad, and madc which also adds the carry flag.
void lower_multiply_add(FunctionLowering& lowering, const Instruction& instruction, bool with_carry_in) {
  ScalarType type = type_of_instruction(instruction);
  if (is_float(type)) {
    lower_fma(lowering, instruction);  // mad.f32 and mad.rn are fused on every target we accept
    return;
  }
  auto& builder = lowering.builder();
  auto sources = integer_sources(lowering, instruction, 2);
  ScalarType result_type = product_type(instruction);
  Value* addend = lowering.read(instruction.operands[3], result_type);
  Value* product = integer_product(lowering, instruction, sources[0], sources[1]);
  if (instruction.qualifiers.saturate) {
    lowering.write(instruction.operands[0], builder.CreateBinaryIntrinsic(llvm::Intrinsic::sadd_sat, product, addend), result_type);
    return;
  }
  if (!with_carry_in && !instruction.qualifiers.carry_out) {
    lowering.write(instruction.operands[0], builder.CreateAdd(product, addend), result_type);
    return;
  }
  Value* sum = builder.CreateBinaryIntrinsic(llvm::Intrinsic::uadd_with_overflow, product, addend);
  Value* result = builder.CreateExtractValue(sum, 0);
  Value* carry = builder.CreateExtractValue(sum, 1);
  if (with_carry_in) {
    Value* carry_in = builder.CreateZExt(builder.CreateLoad(builder.getInt1Ty(), lowering.carry_flag()), result->getType());
    Value* second = builder.CreateBinaryIntrinsic(llvm::Intrinsic::uadd_with_overflow, result, carry_in);
    result = builder.CreateExtractValue(second, 0);
    carry = builder.CreateOr(carry, builder.CreateExtractValue(second, 1));
  }
  if (instruction.qualifiers.carry_out) builder.CreateStore(carry, lowering.carry_flag());
  lowering.write(instruction.operands[0], result, result_type);
}

void lower_mad(FunctionLowering& lowering, const Instruction& instruction) { lower_multiply_add(lowering, instruction, false); }
void lower_madc(FunctionLowering& lowering, const Instruction& instruction) { lower_multiply_add(lowering, instruction, true); }

// mul24/mad24: the product of the low 24 bits of each operand; .hi takes bits 16..47.
void lower_multiply_24(FunctionLowering& lowering, const Instruction& instruction, bool add) {
  auto& builder = lowering.builder();
  ScalarType type = type_of_instruction(instruction);
  bool is_signed_type = is_signed(type);
  auto sources = integer_sources(lowering, instruction, 2);
  llvm::Type* wide = builder.getInt64Ty();
  auto low_24 = [&](Value* value) {
    Value* extended = builder.CreateIntCast(value, wide, is_signed_type);
    Value* shifted = builder.CreateShl(extended, 40);
    return is_signed_type ? builder.CreateAShr(shifted, 40) : builder.CreateLShr(shifted, 40);
  };
  Value* product = builder.CreateMul(low_24(sources[0]), low_24(sources[1]));
  if (instruction.qualifiers.high) product = builder.CreateLShr(product, 16);
  Value* result = builder.CreateTrunc(product, builder.getInt32Ty());
  if (add) result = builder.CreateAdd(result, lowering.read(instruction.operands[3], type));
  lowering.write(instruction.operands[0], result, type);
}

void lower_mul24(FunctionLowering& lowering, const Instruction& instruction) { lower_multiply_24(lowering, instruction, false); }
void lower_mad24(FunctionLowering& lowering, const Instruction& instruction) { lower_multiply_24(lowering, instruction, true); }

// Division by zero and INT_MIN / -1 trap on x86, but are defined on the GPU (measured on an
// H200): x / 0 and x % 0 are all ones for every x, INT_MIN / -1 wraps and INT_MIN % -1 is 0.
void lower_integer_division(FunctionLowering& lowering, const Instruction& instruction, bool remainder) {
  auto& builder = lowering.builder();
  ScalarType type = type_of_instruction(instruction);
  auto sources = integer_sources(lowering, instruction, 2);
  Value* dividend = sources[0];
  Value* divisor = sources[1];
  llvm::Type* integer = dividend->getType();
  Value* zero = llvm::ConstantInt::get(integer, 0);
  Value* one = llvm::ConstantInt::get(integer, 1);
  Value* all_ones = llvm::ConstantInt::getAllOnesValue(integer);
  Value* by_zero = builder.CreateICmpEQ(divisor, zero);
  Value* safe = by_zero;
  if (is_signed(type)) {
    Value* overflow = builder.CreateAnd(builder.CreateICmpEQ(dividend, llvm::ConstantInt::get(integer, llvm::APInt::getSignedMinValue(integer->getIntegerBitWidth()))),
                                        builder.CreateICmpEQ(divisor, all_ones));
    safe = builder.CreateOr(by_zero, overflow);
  }
  Value* safe_divisor = builder.CreateSelect(safe, one, divisor);
  Value* result;
  if (remainder) {
    result = is_signed(type) ? builder.CreateSRem(dividend, safe_divisor) : builder.CreateURem(dividend, safe_divisor);
    // x % 1 is 0, which is also INT_MIN % -1; only x % 0 needs fixing.
    result = builder.CreateSelect(by_zero, all_ones, result);
  } else {
    result = is_signed(type) ? builder.CreateSDiv(dividend, safe_divisor) : builder.CreateUDiv(dividend, safe_divisor);
    // x / 1 is x, which is also INT_MIN / -1; only x / 0 needs fixing.
    result = builder.CreateSelect(by_zero, all_ones, result);
  }
  lowering.write(instruction.operands[0], result, type);
}

void lower_div(FunctionLowering& lowering, const Instruction& instruction) {
  if (!is_float(type_of_instruction(instruction))) {
    lower_integer_division(lowering, instruction, false);
    return;
  }
  if (!instruction.qualifiers.approx) {
    // .full and the IEEE forms: the correctly rounded quotient is within every bound.
    lower_float_binary(lowering, instruction, "fdiv", llvm::Instruction::FDiv);
    return;
  }
  // div.approx.f32 is a * (1/b), and 1/b flushes to zero for 2^126 < |b|: the ISA documents
  // 0 there (NaN for an infinite a). Elsewhere the correctly rounded quotient is within 2 ulp.
  auto& builder = lowering.builder();
  auto sources = float_sources(lowering, instruction);
  Value* a = sources[0];
  Value* b = sources[1];
  Value* flushed_reciprocal = builder.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, llvm::ConstantFP::get(b->getType(), 0.0), b);
  Value* huge = builder.CreateFCmpOGT(builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, b), llvm::ConstantFP::get(b->getType(), 0x1p126));
  Value* quotient = builder.CreateSelect(huge, builder.CreateFMul(a, flushed_reciprocal), builder.CreateFDiv(a, b));
  write_float_result(lowering, instruction, quotient);
}

void lower_rem(FunctionLowering& lowering, const Instruction& instruction) { lower_integer_division(lowering, instruction, true); }

// abs and neg only touch the sign bit, so they work on the bits of every float type. A NaN
// (measured on an H200) becomes the canonical NaN, except in f64, where it keeps its sign and
// payload and is quieted.
void lower_sign_operation(FunctionLowering& lowering, const Instruction& instruction, bool negate) {
  ScalarType type = type_of_instruction(instruction);
  auto& builder = lowering.builder();
  if (!is_float(type)) {
    Value* value = lowering.read(instruction.operands[1], type);
    Value* result = negate ? builder.CreateNeg(value) : builder.CreateBinaryIntrinsic(llvm::Intrinsic::abs, value, builder.getFalse());
    lowering.write(instruction.operands[0], result, type);
    return;
  }
  Value* value = float_sources(lowering, instruction)[0];
  llvm::Type* integer = shaped_integer(value->getType());
  Value* sign = llvm::ConstantInt::get(integer, llvm::APInt::getSignMask(integer->getScalarSizeInBits()));
  Value* bits = builder.CreateBitCast(value, integer);
  Value* result = negate ? builder.CreateXor(bits, sign) : builder.CreateAnd(bits, builder.CreateNot(sign));
  Value* infinity = builder.CreateBitCast(llvm::ConstantFP::getInfinity(value->getType()), integer);
  Value* is_nan = builder.CreateICmpUGT(builder.CreateAnd(bits, builder.CreateNot(sign)), infinity);
  Value* nan = type == ScalarType::f64 ? builder.CreateOr(bits, builder.getInt64(uint64_t{1} << 51))
                                       : builder.CreateBitCast(canonical_nan(value->getType()), integer);
  result = builder.CreateSelect(is_nan, nan, result);
  write_sign_result(lowering, instruction, builder.CreateBitCast(result, value->getType()));
}

void lower_abs(FunctionLowering& lowering, const Instruction& instruction) { lower_sign_operation(lowering, instruction, false); }
void lower_neg(FunctionLowering& lowering, const Instruction& instruction) { lower_sign_operation(lowering, instruction, true); }

// When both operands are NaN: f32 and 16-bit types give the canonical NaN; f64 (measured on an
// H200) gives b, quieted.
Value* both_nan_result(FunctionLowering& lowering, Value* a, Value* b) {
  auto& builder = lowering.builder();
  if (!a->getType()->getScalarType()->isDoubleTy()) return canonical_nan(a->getType());
  return builder.CreateBitCast(builder.CreateOr(builder.CreateBitCast(b, builder.getInt64Ty()), uint64_t{1} << 51), a->getType());
}

// PTX min/max: a NaN operand yields the other one (both NaN: the canonical NaN), -0 is below +0;
// .NaN makes any NaN operand win; .xorsign.abs compares magnitudes and gives the result the
// exclusive or of the operands' signs. Comparisons run on widened copies of 16-bit floats, and the
// result is chosen among bit patterns: a choice between .bf16 values makes x86's code generator
// round through f32 with __truncsfbf2, which processors without AVX-512 BF16 take from a
// library the loader does not have (max.bf16 failed to load on such a machine).
Value* float_min_max(FunctionLowering& lowering, const Instruction& instruction, Value* a, Value* b, bool maximum) {
  ScalarType type = type_of_instruction(instruction);
  auto& builder = lowering.builder();
  llvm::Type* float_type = a->getType();
  llvm::Type* integer = shaped_integer(float_type);
  Value* sign = llvm::ConstantInt::get(integer, llvm::APInt::getSignMask(integer->getScalarSizeInBits()));
  bool xorsign = has_word(instruction, "xorsign");
  Value* a_bits = builder.CreateBitCast(a, integer);
  Value* b_bits = builder.CreateBitCast(b, integer);
  Value* result_sign = builder.CreateAnd(builder.CreateXor(a_bits, b_bits), sign);
  if (xorsign) {
    a_bits = builder.CreateAnd(a_bits, builder.CreateNot(sign));
    b_bits = builder.CreateAnd(b_bits, builder.CreateNot(sign));
  }
  auto compared = [&](Value* bits) {
    Value* value = builder.CreateBitCast(bits, float_type);
    return is_half_type(type) ? widen_half(lowering, value) : value;
  };
  Value* a_compared = compared(a_bits);
  Value* b_compared = compared(b_bits);
  Value* a_negative = builder.CreateICmpSLT(a_bits, llvm::Constant::getNullValue(integer));
  Value* equal = builder.CreateFCmpOEQ(a_compared, b_compared);
  Value* a_wins = maximum ? builder.CreateOr(builder.CreateFCmpOGT(a_compared, b_compared), builder.CreateAnd(equal, builder.CreateNot(a_negative)))
                          : builder.CreateOr(builder.CreateFCmpOLT(a_compared, b_compared), builder.CreateAnd(equal, a_negative));
  Value* result = builder.CreateSelect(a_wins, a_bits, b_bits);
  Value* a_nan = builder.CreateFCmpUNO(a_compared, a_compared);
  Value* b_nan = builder.CreateFCmpUNO(b_compared, b_compared);
  Value* nan = builder.CreateBitCast(canonical_nan(float_type), integer);
  Value* any_nan = builder.CreateOr(a_nan, b_nan);
  if (has_word(instruction, "NaN")) {
    result = builder.CreateSelect(any_nan, nan, result);
  } else {
    result = builder.CreateSelect(b_nan, a_bits, result);
    result = builder.CreateSelect(a_nan, b_bits, result);
    Value* both_nan = builder.CreateBitCast(both_nan_result(lowering, builder.CreateBitCast(a_bits, float_type),
                                                            builder.CreateBitCast(b_bits, float_type)), integer);
    result = builder.CreateSelect(builder.CreateAnd(a_nan, b_nan), both_nan, result);
  }
  if (xorsign) {
    // The sign applies whenever the result is a number, even one chosen over a NaN operand.
    Value* result_nan = has_word(instruction, "NaN") ? any_nan : builder.CreateAnd(a_nan, b_nan);
    result = builder.CreateSelect(result_nan, result, builder.CreateOr(result, result_sign));
  }
  return builder.CreateBitCast(result, float_type);
}

// sm_100's min and max of three .f32 values, without .xorsign.abs and .relu, are those of two,
// twice: the NaN rules and the order of the zeros hold either way.
void lower_min_max(FunctionLowering& lowering, const Instruction& instruction, bool maximum) {
  ScalarType type = type_of_instruction(instruction);
  auto& builder = lowering.builder();
  const bool three = instruction.operands.size() == 4;
  if (three && (type != ScalarType::f32 || has_word(instruction, "xorsign") || has_word(instruction, "relu"))) {
    lowering.error(instruction.location, "min and max of three values take .f32, without .xorsign.abs and .relu");
    return;
  }
  if (!is_float(type)) {
    auto sources = is_packed_integer(type) ? packed_integer_sources(lowering, instruction, 2) : integer_sources(lowering, instruction, 2);
    llvm::Intrinsic::ID intrinsic = is_signed(type) ? (maximum ? llvm::Intrinsic::smax : llvm::Intrinsic::smin)
                                                    : (maximum ? llvm::Intrinsic::umax : llvm::Intrinsic::umin);
    Value* result = builder.CreateBinaryIntrinsic(intrinsic, sources[0], sources[1]);
    // .relu: negative results become 0.
    if (has_word(instruction, "relu")) result = builder.CreateBinaryIntrinsic(llvm::Intrinsic::smax, result, llvm::Constant::getNullValue(result->getType()));
    if (is_packed_integer(type)) write_packed_integer(lowering, instruction, result);
    else lowering.write(instruction.operands[0], result, type);
    return;
  }
  auto sources = float_sources(lowering, instruction);
  Value* result = float_min_max(lowering, instruction, sources[0], sources[1], maximum);
  if (three) result = float_min_max(lowering, instruction, result, sources[2], maximum);
  write_float_result(lowering, instruction, result);
}

void lower_min(FunctionLowering& lowering, const Instruction& instruction) { lower_min_max(lowering, instruction, false); }
void lower_max(FunctionLowering& lowering, const Instruction& instruction) { lower_min_max(lowering, instruction, true); }

void lower_rcp(FunctionLowering& lowering, const Instruction& instruction) {
  auto sources = float_sources(lowering, instruction);
  Value* result = with_rounding(lowering, instruction.qualifiers.rounding, "rcp", sources, sources[0]->getType(),
                                [](llvm::IRBuilder<>& builder, llvm::ArrayRef<Value*> arguments) {
                                  return builder.CreateFDiv(llvm::ConstantFP::get(arguments[0]->getType(), 1.0), arguments[0]);
                                });
  write_float_result(lowering, instruction, result);
}

void lower_sqrt(FunctionLowering& lowering, const Instruction& instruction) {
  auto sources = float_sources(lowering, instruction);
  Value* result = with_rounding(lowering, instruction.qualifiers.rounding, "sqrt", sources, sources[0]->getType(),
                                [](llvm::IRBuilder<>& builder, llvm::ArrayRef<Value*> arguments) {
                                  llvm::Type* type = arguments[0]->getType();
                                  if (builder.getIsFPConstrained())
                                    return static_cast<Value*>(builder.CreateConstrainedFPCall(
                                        llvm::Intrinsic::getDeclaration(builder.GetInsertBlock()->getModule(),
                                                                        llvm::Intrinsic::experimental_constrained_sqrt, {type}),
                                        arguments));
                                  return static_cast<Value*>(builder.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, arguments[0]));
                                });
  write_float_result(lowering, instruction, result);
}

// The .approx functions: the host's correctly rounded (or libm-accurate) results are within
// every documented bound.
void lower_approximate(FunctionLowering& lowering, const Instruction& instruction, llvm::Intrinsic::ID intrinsic) {
  auto sources = computing_sources(lowering, instruction);
  write_float_result(lowering, instruction, lowering.builder().CreateUnaryIntrinsic(intrinsic, sources[0]));
}

void lower_rsqrt(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  auto sources = float_sources(lowering, instruction);
  Value* root = builder.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, sources[0]);
  write_float_result(lowering, instruction, builder.CreateFDiv(llvm::ConstantFP::get(root->getType(), 1.0), root));
}

void lower_sin(FunctionLowering& lowering, const Instruction& instruction) { lower_approximate(lowering, instruction, llvm::Intrinsic::sin); }
void lower_cos(FunctionLowering& lowering, const Instruction& instruction) { lower_approximate(lowering, instruction, llvm::Intrinsic::cos); }
void lower_lg2(FunctionLowering& lowering, const Instruction& instruction) { lower_approximate(lowering, instruction, llvm::Intrinsic::log2); }
// ex2.approx.f16 truncates: the H200's results are 2^x rounded towards zero, and infinity from
// 2^16 on (measured: all but one of the 65536 inputs).
void lower_ex2(FunctionLowering& lowering, const Instruction& instruction) {
  ScalarType type = type_of_instruction(instruction);
  if (type != ScalarType::f16 && type != ScalarType::f16x2) {
    lower_approximate(lowering, instruction, llvm::Intrinsic::exp2);
    return;
  }
  auto& builder = lowering.builder();
  Value* power = builder.CreateUnaryIntrinsic(llvm::Intrinsic::exp2, computing_sources(lowering, instruction)[0]);
  Value* truncated = narrow_half(lowering, power, type, {Rounding::rz, false, false, NanRule::canonical});
  Value* overflows = builder.CreateFCmpOGE(power, llvm::ConstantFP::get(power->getType(), 0x1p16));
  write_float_result(lowering, instruction, builder.CreateSelect(overflows, llvm::ConstantFP::getInfinity(truncated->getType()), truncated));
}

// tanh.approx: the C library's tanhf is within a few ulp, far inside the documented 2^-11;
// 16-bit floats take it lane by lane in f32.
void lower_tanh(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  Value* source = computing_sources(lowering, instruction)[0];
  llvm::FunctionCallee tanh = lowering.module().target().getOrInsertFunction("tanhf", builder.getFloatTy(), builder.getFloatTy());
  auto call = [&](Value* lane) {
    auto* result = builder.CreateCall(tanh, {lane});
    result->setDoesNotAccessMemory();
    return result;
  };
  Value* result = nullptr;
  if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(source->getType())) {
    result = llvm::PoisonValue::get(vector);
    for (uint64_t lane = 0; lane < vector->getNumElements(); ++lane)
      result = builder.CreateInsertElement(result, call(builder.CreateExtractElement(source, lane)), lane);
  } else {
    result = call(source);
  }
  write_float_result(lowering, instruction, result);
}

// sad d, a, b, c: c + |a - b|, the difference taken in a's signedness.
void lower_sad(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  ScalarType type = type_of_instruction(instruction);
  auto sources = integer_sources(lowering, instruction, 3);
  Value* a_below = is_signed(type) ? builder.CreateICmpSLT(sources[0], sources[1]) : builder.CreateICmpULT(sources[0], sources[1]);
  Value* difference = builder.CreateSelect(a_below, builder.CreateSub(sources[1], sources[0]), builder.CreateSub(sources[0], sources[1]));
  lowering.write(instruction.operands[0], builder.CreateAdd(sources[2], difference), type);
}

// copysign d, a, b: b's magnitude with a's sign.
void lower_copysign(FunctionLowering& lowering, const Instruction& instruction) {
  auto sources = float_sources(lowering, instruction);
  write_sign_result(lowering, instruction, lowering.builder().CreateBinaryIntrinsic(llvm::Intrinsic::copysign, sources[1], sources[0]));
}

}  // namespace

// dp4a.atype.btype d, a, b, c and dp2a.lo|hi.atype.btype d, a, b, c: c plus the dot product of
// a's lanes (four bytes, or two 16-bit halves for dp2a) with b's bytes (for dp2a the low or high
// two), each lane extended by its operand's signedness; the sum wraps at 32 bits.
void lower_dot_product(FunctionLowering& lowering, const Instruction& instruction, uint32_t a_lane_bits) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  if (qualifiers.types.size() != 2) {
    lowering.error(instruction.location, instruction.opcode + " needs the types of a and b");
    return;
  }
  ScalarType a_type = qualifiers.types[0];
  ScalarType b_type = qualifiers.types[1];
  Value* a = lowering.read(instruction.operands[1], a_type);
  Value* b = lowering.read(instruction.operands[2], b_type);
  Value* sum = lowering.read(instruction.operands[3], ScalarType::b32);
  uint32_t lanes = 32 / a_lane_bits;
  uint32_t first_b_lane = qualifiers.high ? 2 : 0;
  auto lane = [&](Value* word, uint32_t index, uint32_t bits, bool signed_lane) {
    Value* narrow = builder.CreateTrunc(builder.CreateLShr(word, index * bits), builder.getIntNTy(bits));
    return builder.CreateIntCast(narrow, builder.getInt32Ty(), signed_lane);
  };
  for (uint32_t index = 0; index < lanes; ++index) {
    Value* product = builder.CreateMul(lane(a, index, a_lane_bits, is_signed(a_type)),
                                       lane(b, first_b_lane + index, 8, is_signed(b_type)));
    sum = builder.CreateAdd(sum, product);
  }
  bool signed_result = is_signed(a_type) || is_signed(b_type);
  lowering.write(instruction.operands[0], sum, signed_result ? ScalarType::s32 : ScalarType::u32);
}

void lower_dp4a(FunctionLowering& lowering, const Instruction& instruction) { lower_dot_product(lowering, instruction, 8); }
void lower_dp2a(FunctionLowering& lowering, const Instruction& instruction) { lower_dot_product(lowering, instruction, 16); }

void add_arithmetic_lowerings(LoweringTable& table) {
  table["add"] = lower_add;
  table["sub"] = lower_sub;
  table["addc"] = lower_addc;
  table["subc"] = lower_subc;
  table["mul"] = lower_mul;
  table["mad"] = lower_mad;
  table["madc"] = lower_madc;
  table["mul24"] = lower_mul24;
  table["dp4a"] = lower_dp4a;
  table["dp2a"] = lower_dp2a;
  table["mad24"] = lower_mad24;
  table["fma"] = lower_fma;
  table["div"] = lower_div;
  table["rem"] = lower_rem;
  table["abs"] = lower_abs;
  table["neg"] = lower_neg;
  table["min"] = lower_min;
  table["max"] = lower_max;
  table["rcp"] = lower_rcp;
  table["sqrt"] = lower_sqrt;
  table["rsqrt"] = lower_rsqrt;
  table["sin"] = lower_sin;
  table["cos"] = lower_cos;
  table["lg2"] = lower_lg2;
  table["ex2"] = lower_ex2;
  table["tanh"] = lower_tanh;
  table["copysign"] = lower_copysign;
  table["sad"] = lower_sad;
}

}  // namespace xcuda::ptx
