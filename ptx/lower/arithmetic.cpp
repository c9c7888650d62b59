// Integer and floating-point arithmetic: add sub mul mad fma div rem abs neg min max, the
// carry chain (add.cc, addc), dp4a dp2a, and the float functions rcp sqrt rsqrt sin cos lg2 ex2.
#include <llvm/IR/Intrinsics.h>

#include "lower/floating_point.h"
#include "lower/instruction_lowering.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {
namespace {

using llvm::Value;

ScalarType type_of_instruction(const Instruction& instruction) { return instruction.qualifiers.types[0]; }

bool flushes(const Instruction& instruction) { return instruction.qualifiers.ftz; }

// Finishes a computed float result: saturation, the GPU's NaN, flushing, then the store.
void write_float_result(FunctionLowering& lowering, const Instruction& instruction, Value* value) {
  if (instruction.qualifiers.saturate) value = saturate_float(lowering, value);
  value = canonicalize_nan(lowering, value);
  write_float(lowering, instruction.operands[0], value, type_of_instruction(instruction), flushes(instruction));
}

// Finishes abs, neg and copysign, which only touch the sign bit and keep NaN payloads.
void write_sign_result(FunctionLowering& lowering, const Instruction& instruction, Value* value) {
  write_float(lowering, instruction.operands[0], value, type_of_instruction(instruction), flushes(instruction));
}

std::vector<Value*> float_sources(FunctionLowering& lowering, const Instruction& instruction) {
  std::vector<Value*> sources;
  for (size_t i = 1; i < instruction.operands.size(); ++i)
    sources.push_back(read_float(lowering, instruction.operands[i], type_of_instruction(instruction), flushes(instruction)));
  return sources;
}

std::vector<Value*> integer_sources(FunctionLowering& lowering, const Instruction& instruction, size_t count) {
  std::vector<Value*> sources;
  for (size_t i = 1; i <= count; ++i) sources.push_back(lowering.read(instruction.operands[i], type_of_instruction(instruction)));
  return sources;
}

void lower_float_binary(FunctionLowering& lowering, const Instruction& instruction, std::string_view name,
                        llvm::Instruction::BinaryOps operation) {
  auto sources = float_sources(lowering, instruction);
  Value* result = with_rounding(lowering, instruction.qualifiers.rounding, name, sources, sources[0]->getType(),
                                [operation](llvm::IRBuilder<>& builder, llvm::ArrayRef<Value*> arguments) {
                                  return builder.CreateBinOp(operation, arguments[0], arguments[1]);
                                });
  write_float_result(lowering, instruction, result);
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
  auto sources = integer_sources(lowering, instruction, 2);
  const Qualifiers& qualifiers = instruction.qualifiers;
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

void lower_fma(FunctionLowering& lowering, const Instruction& instruction) {
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
  write_float_result(lowering, instruction, result);
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
  // .approx and .full promise a bounded error; the correctly rounded quotient is within it.
  lower_float_binary(lowering, instruction, "fdiv", llvm::Instruction::FDiv);
}

void lower_rem(FunctionLowering& lowering, const Instruction& instruction) { lower_integer_division(lowering, instruction, true); }

void lower_abs(FunctionLowering& lowering, const Instruction& instruction) {
  ScalarType type = type_of_instruction(instruction);
  auto& builder = lowering.builder();
  if (is_float(type)) {
    auto sources = float_sources(lowering, instruction);
    Value* magnitude = builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, sources[0]);
    if (magnitude->getType()->getScalarType()->isFloatTy()) {
      // abs.f32 quiets a signalling NaN (measured); setting the quiet bit of a quiet NaN or of
      // a number that is not NaN would be wrong, hence the select.
      Value* quieted = builder.CreateBitCast(
          builder.CreateOr(builder.CreateBitCast(magnitude, builder.getInt32Ty()), builder.getInt32(0x00400000)),
          magnitude->getType());
      magnitude = builder.CreateSelect(builder.CreateFCmpUNO(magnitude, magnitude), quieted, magnitude);
    }
    write_sign_result(lowering, instruction, magnitude);
    return;
  }
  Value* value = lowering.read(instruction.operands[1], type);
  lowering.write(instruction.operands[0], builder.CreateBinaryIntrinsic(llvm::Intrinsic::abs, value, builder.getFalse()), type);
}

void lower_neg(FunctionLowering& lowering, const Instruction& instruction) {
  ScalarType type = type_of_instruction(instruction);
  auto& builder = lowering.builder();
  if (is_float(type)) {
    auto sources = float_sources(lowering, instruction);
    write_sign_result(lowering, instruction, builder.CreateFNeg(sources[0]));
    return;
  }
  lowering.write(instruction.operands[0], builder.CreateNeg(lowering.read(instruction.operands[1], type)), type);
}

// When both operands are NaN: f32 gives the canonical NaN; f64 (measured on an H200) gives the
// signalling operand quieted, a signalling a first, else a.
Value* both_nan_result(FunctionLowering& lowering, Value* a, Value* b) {
  auto& builder = lowering.builder();
  if (!a->getType()->getScalarType()->isDoubleTy()) return canonical_nan(a->getType());
  llvm::Type* integer = builder.getInt64Ty();
  const uint64_t quiet_bit = 1ull << 51;
  Value* a_bits = builder.CreateBitCast(a, integer);
  Value* b_bits = builder.CreateBitCast(b, integer);
  Value* a_signalling = builder.CreateICmpEQ(builder.CreateAnd(a_bits, quiet_bit), builder.getInt64(0));
  Value* b_signalling = builder.CreateICmpEQ(builder.CreateAnd(b_bits, quiet_bit), builder.getInt64(0));
  Value* chosen = builder.CreateSelect(builder.CreateAnd(builder.CreateNot(a_signalling), b_signalling), b_bits, a_bits);
  return builder.CreateBitCast(builder.CreateOr(chosen, quiet_bit), a->getType());
}

// PTX min/max: a NaN operand yields the other one (both NaN: the canonical NaN), -0 is below +0;
// .NaN makes any NaN operand win.
void lower_min_max(FunctionLowering& lowering, const Instruction& instruction, bool maximum) {
  ScalarType type = type_of_instruction(instruction);
  auto& builder = lowering.builder();
  if (!is_float(type)) {
    auto sources = integer_sources(lowering, instruction, 2);
    llvm::Intrinsic::ID intrinsic = is_signed(type) ? (maximum ? llvm::Intrinsic::smax : llvm::Intrinsic::smin)
                                                    : (maximum ? llvm::Intrinsic::umax : llvm::Intrinsic::umin);
    lowering.write(instruction.operands[0], builder.CreateBinaryIntrinsic(intrinsic, sources[0], sources[1]), type);
    return;
  }
  auto sources = float_sources(lowering, instruction);
  Value* a = sources[0];
  Value* b = sources[1];
  llvm::Type* integer = builder.getIntNTy(a->getType()->getScalarSizeInBits());
  if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(a->getType())) integer = llvm::FixedVectorType::get(integer->getScalarType(), vector->getNumElements());
  Value* a_negative = builder.CreateICmpSLT(builder.CreateBitCast(a, integer), llvm::Constant::getNullValue(integer));
  Value* equal = builder.CreateFCmpOEQ(a, b);
  Value* a_wins = maximum ? builder.CreateOr(builder.CreateFCmpOGT(a, b), builder.CreateAnd(equal, builder.CreateNot(a_negative)))
                          : builder.CreateOr(builder.CreateFCmpOLT(a, b), builder.CreateAnd(equal, a_negative));
  Value* result = builder.CreateSelect(a_wins, a, b);
  Value* a_nan = builder.CreateFCmpUNO(a, a);
  Value* b_nan = builder.CreateFCmpUNO(b, b);
  Value* nan = canonical_nan(a->getType());
  bool propagate_nan = std::find(instruction.qualifiers.other.begin(), instruction.qualifiers.other.end(), "NaN") !=
                       instruction.qualifiers.other.end();
  if (propagate_nan) {
    result = builder.CreateSelect(builder.CreateOr(a_nan, b_nan), nan, result);
  } else {
    result = builder.CreateSelect(b_nan, a, result);
    result = builder.CreateSelect(a_nan, b, result);
    result = builder.CreateSelect(builder.CreateAnd(a_nan, b_nan), both_nan_result(lowering, a, b), result);
  }
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
  auto sources = float_sources(lowering, instruction);
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
void lower_ex2(FunctionLowering& lowering, const Instruction& instruction) { lower_approximate(lowering, instruction, llvm::Intrinsic::exp2); }

// tanh.approx: the C library's tanhf is within a few ulp, far inside the documented 2^-11.
void lower_tanh(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  ScalarType type = type_of_instruction(instruction);
  if (type != ScalarType::f32) {
    lowering.error(instruction.location, "tanh." + std::string(name_of(type)) + " is not supported yet");
    return;
  }
  auto sources = float_sources(lowering, instruction);
  llvm::FunctionCallee tanh = lowering.module().target().getOrInsertFunction("tanhf", builder.getFloatTy(), builder.getFloatTy());
  auto* result = builder.CreateCall(tanh, {sources[0]});
  result->setDoesNotAccessMemory();
  write_float_result(lowering, instruction, result);
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
}

}  // namespace xcuda::ptx
