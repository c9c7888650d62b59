// Logic and bit manipulation: and or xor not cnot, shifts (PTX clamps large shift amounts
// where LLVM would produce poison), funnel shifts, popc clz brev bfind bfe bfi prmt lop3 bmsk szext
// fns.
#include <algorithm>
#include <array>

#include <llvm/IR/Intrinsics.h>

#include "lower/instruction_lowering.h"

namespace xcuda::ptx {
namespace {

using llvm::Value;

ScalarType type_of_instruction(const Instruction& instruction) { return instruction.qualifiers.types[0]; }

Value* constant(llvm::Type* type, uint64_t value) { return llvm::ConstantInt::get(type, value); }

// A u32 amount (shift, position, length) widened or narrowed to the operated-on type.
Value* amount(FunctionLowering& lowering, const Operand& operand, llvm::Type* type) {
  return lowering.builder().CreateZExtOrTrunc(lowering.read(operand, ScalarType::u32), type);
}

void lower_binary(FunctionLowering& lowering, const Instruction& instruction, llvm::Instruction::BinaryOps operation) {
  ScalarType type = type_of_instruction(instruction);
  Value* a = lowering.read(instruction.operands[1], type);
  Value* b = lowering.read(instruction.operands[2], type);
  lowering.write(instruction.operands[0], lowering.builder().CreateBinOp(operation, a, b), type);
}

void lower_and(FunctionLowering& lowering, const Instruction& instruction) { lower_binary(lowering, instruction, llvm::Instruction::And); }
void lower_or(FunctionLowering& lowering, const Instruction& instruction) { lower_binary(lowering, instruction, llvm::Instruction::Or); }
void lower_xor(FunctionLowering& lowering, const Instruction& instruction) { lower_binary(lowering, instruction, llvm::Instruction::Xor); }

void lower_not(FunctionLowering& lowering, const Instruction& instruction) {
  ScalarType type = type_of_instruction(instruction);
  lowering.write(instruction.operands[0], lowering.builder().CreateNot(lowering.read(instruction.operands[1], type)), type);
}

void lower_cnot(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  ScalarType type = type_of_instruction(instruction);
  Value* value = lowering.read(instruction.operands[1], type);
  Value* is_zero = builder.CreateICmpEQ(value, constant(value->getType(), 0));
  lowering.write(instruction.operands[0], builder.CreateZExt(is_zero, value->getType()), type);
}

void lower_shift(FunctionLowering& lowering, const Instruction& instruction, bool left) {
  auto& builder = lowering.builder();
  ScalarType type = type_of_instruction(instruction);
  Value* value = lowering.read(instruction.operands[1], type);
  llvm::Type* integer = value->getType();
  uint32_t bits = integer->getIntegerBitWidth();
  Value* count = builder.CreateZExt(lowering.read(instruction.operands[2], ScalarType::u32), builder.getInt64Ty());
  Value* too_far = builder.CreateICmpUGE(count, builder.getInt64(bits));
  Value* clamped = builder.CreateTrunc(builder.CreateSelect(too_far, builder.getInt64(bits - 1), count), integer);
  Value* result;
  if (!left && is_signed(type)) {
    result = builder.CreateAShr(value, clamped);  // shifting by width-1 already fills with the sign
  } else {
    result = left ? builder.CreateShl(value, clamped) : builder.CreateLShr(value, clamped);
    result = builder.CreateSelect(too_far, constant(integer, 0), result);
  }
  lowering.write(instruction.operands[0], result, type);
}

void lower_shl(FunctionLowering& lowering, const Instruction& instruction) { lower_shift(lowering, instruction, true); }
void lower_shr(FunctionLowering& lowering, const Instruction& instruction) { lower_shift(lowering, instruction, false); }

// shf.l/.r d, a, b, c: shift the 64-bit b:a by c and keep the upper (l) or lower (r) half.
void lower_shf(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  ScalarType type = type_of_instruction(instruction);
  bool left = has_word(instruction, "l");
  if (left == has_word(instruction, "r")) {
    lowering.error(instruction.location, "shf needs exactly one of .l and .r");
    return;
  }
  Value* low = lowering.read(instruction.operands[1], type);
  Value* high = lowering.read(instruction.operands[2], type);
  Value* count = amount(lowering, instruction.operands[3], low->getType());
  Value* result = builder.CreateIntrinsic(left ? llvm::Intrinsic::fshl : llvm::Intrinsic::fshr, {low->getType()},
                                          {high, low, count});
  if (!has_word(instruction, "wrap")) {
    // .clamp: a count of 32 or more shifts everything through.
    Value* saturated = builder.CreateICmpUGE(count, constant(low->getType(), 32));
    result = builder.CreateSelect(saturated, left ? low : high, result);
  }
  lowering.write(instruction.operands[0], result, type);
}

void lower_count(FunctionLowering& lowering, const Instruction& instruction, llvm::Intrinsic::ID intrinsic) {
  auto& builder = lowering.builder();
  Value* value = lowering.read(instruction.operands[1], type_of_instruction(instruction));
  Value* count = intrinsic == llvm::Intrinsic::ctpop ? builder.CreateUnaryIntrinsic(intrinsic, value)
                                                      : builder.CreateBinaryIntrinsic(intrinsic, value, builder.getFalse());
  lowering.write(instruction.operands[0], builder.CreateZExtOrTrunc(count, builder.getInt32Ty()), ScalarType::u32);
}

void lower_popc(FunctionLowering& lowering, const Instruction& instruction) { lower_count(lowering, instruction, llvm::Intrinsic::ctpop); }
void lower_clz(FunctionLowering& lowering, const Instruction& instruction) { lower_count(lowering, instruction, llvm::Intrinsic::ctlz); }

void lower_brev(FunctionLowering& lowering, const Instruction& instruction) {
  ScalarType type = type_of_instruction(instruction);
  Value* value = lowering.read(instruction.operands[1], type);
  lowering.write(instruction.operands[0], lowering.builder().CreateUnaryIntrinsic(llvm::Intrinsic::bitreverse, value), type);
}

// bfind: the position of the most significant bit that differs from the sign (for .s), or the
// shift that would bring it to the top with .shiftamt; 0xFFFFFFFF when there is none.
void lower_bfind(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  ScalarType type = type_of_instruction(instruction);
  Value* value = lowering.read(instruction.operands[1], type);
  llvm::Type* integer = value->getType();
  uint32_t bits = integer->getIntegerBitWidth();
  if (is_signed(type)) {
    Value* negative = builder.CreateICmpSLT(value, constant(integer, 0));
    value = builder.CreateSelect(negative, builder.CreateNot(value), value);
  }
  Value* leading = builder.CreateTrunc(builder.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, value, builder.getFalse()), builder.getInt32Ty());
  Value* result = has_word(instruction, "shiftamt") ? leading : builder.CreateSub(builder.getInt32(bits - 1), leading);
  Value* none = builder.CreateICmpEQ(value, constant(integer, 0));
  lowering.write(instruction.operands[0], builder.CreateSelect(none, builder.getInt32(0xFFFFFFFFu), result), ScalarType::u32);
}

// A mask of the low `count` bits, for count in 0..width.
Value* low_mask(llvm::IRBuilder<>& builder, Value* count, llvm::Type* integer) {
  uint32_t bits = integer->getIntegerBitWidth();
  Value* full = builder.CreateICmpUGE(count, constant(integer, bits));
  Value* safe = builder.CreateSelect(full, constant(integer, 0), count);
  Value* mask = builder.CreateSub(builder.CreateShl(constant(integer, 1), safe), constant(integer, 1));
  return builder.CreateSelect(full, llvm::ConstantInt::getAllOnesValue(integer), mask);
}

// bfe d, a, position, length: the field a[position +: length], sign-extended from its top bit
// (or from a's top bit when the field runs past it) for .s types.
void lower_bfe(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  ScalarType type = type_of_instruction(instruction);
  Value* value = lowering.read(instruction.operands[1], type);
  llvm::Type* integer = value->getType();
  uint32_t bits = integer->getIntegerBitWidth();
  // The ISA takes position and length modulo 256; the H200 does so for .b32 but reads all 32
  // bits of them for 64-bit types (measured).
  Value* position = amount(lowering, instruction.operands[2], integer);
  Value* length = amount(lowering, instruction.operands[3], integer);
  if (bits == 32) {
    position = builder.CreateAnd(position, constant(integer, 0xFF));
    length = builder.CreateAnd(length, constant(integer, 0xFF));
  }
  Value* inside = builder.CreateICmpULT(position, constant(integer, bits));
  Value* safe_position = builder.CreateSelect(inside, position, constant(integer, 0));
  Value* shifted = builder.CreateSelect(inside, builder.CreateLShr(value, safe_position), constant(integer, 0));
  Value* room = builder.CreateSelect(inside, builder.CreateSub(constant(integer, bits), safe_position), constant(integer, 0));
  Value* field_bits = builder.CreateBinaryIntrinsic(llvm::Intrinsic::umin, length, room);
  Value* mask = low_mask(builder, field_bits, integer);
  Value* result = builder.CreateAnd(shifted, mask);
  if (is_signed(type)) {
    Value* last = builder.CreateSub(builder.CreateAdd(position, length), constant(integer, 1));
    Value* sign_index = builder.CreateBinaryIntrinsic(llvm::Intrinsic::umin, last, constant(integer, bits - 1));
    Value* sign = builder.CreateTrunc(builder.CreateLShr(value, sign_index), builder.getInt1Ty());
    sign = builder.CreateAnd(sign, builder.CreateICmpNE(length, constant(integer, 0)));
    result = builder.CreateSelect(sign, builder.CreateOr(result, builder.CreateNot(mask)), result);
  }
  lowering.write(instruction.operands[0], result, type);
}

// bfi d, a, b, position, length: b with a's low `length` bits inserted at `position`.
void lower_bfi(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  ScalarType type = type_of_instruction(instruction);
  Value* field = lowering.read(instruction.operands[1], type);
  Value* base = lowering.read(instruction.operands[2], type);
  llvm::Type* integer = field->getType();
  uint32_t bits = integer->getIntegerBitWidth();
  Value* position = builder.CreateAnd(amount(lowering, instruction.operands[3], integer), constant(integer, 0xFF));
  Value* length = builder.CreateAnd(amount(lowering, instruction.operands[4], integer), constant(integer, 0xFF));
  Value* inside = builder.CreateICmpULT(position, constant(integer, bits));
  Value* safe_position = builder.CreateSelect(inside, position, constant(integer, 0));
  Value* mask = builder.CreateShl(low_mask(builder, length, integer), safe_position);
  Value* inserted = builder.CreateOr(builder.CreateAnd(base, builder.CreateNot(mask)),
                                     builder.CreateAnd(builder.CreateShl(field, safe_position), mask));
  lowering.write(instruction.operands[0], builder.CreateSelect(inside, inserted, base), type);
}

// The byte-select modes of prmt, each written as the default-mode control words that its four
// selector values (c & 3) stand for, in the PTX ISA's table order d.b3 d.b2 d.b1 d.b0.
struct PermuteMode {
  std::string_view name;
  std::array<uint32_t, 4> controls;
};
constexpr PermuteMode permute_modes[] = {
    {"f4e", {0x3210, 0x4321, 0x5432, 0x6543}}, {"b4e", {0x5670, 0x6701, 0x7012, 0x0123}},
    {"rc8", {0x0000, 0x1111, 0x2222, 0x3333}}, {"ecl", {0x3210, 0x3211, 0x3222, 0x3333}},
    {"ecr", {0x0000, 0x1110, 0x2210, 0x3210}}, {"rc16", {0x1010, 0x3232, 0x1010, 0x3232}},
};

// prmt d, a, b, c: each result byte picks one of the eight bytes of b:a by a selector nibble
// of the control word, optionally replicating that byte's sign bit (default mode only). A mode
// turns c's two low bits into the control word of its table.
void lower_prmt(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  Value* selectors = lowering.read(instruction.operands[3], ScalarType::b32);
  if (!instruction.qualifiers.other.empty()) {
    const std::string& mode_name = instruction.qualifiers.other[0];
    const PermuteMode* mode = nullptr;
    for (const PermuteMode& candidate : permute_modes)
      if (candidate.name == mode_name) mode = &candidate;
    if (mode == nullptr) {
      lowering.error(instruction.location, "prmt ." + mode_name + " is not a prmt mode");
      return;
    }
    Value* controls = llvm::ConstantDataVector::get(builder.getContext(), llvm::ArrayRef<uint32_t>(mode->controls));
    selectors = builder.CreateExtractElement(controls, builder.CreateAnd(selectors, 3));
  }
  Value* a = builder.CreateZExt(lowering.read(instruction.operands[1], ScalarType::b32), builder.getInt64Ty());
  Value* b = builder.CreateZExt(lowering.read(instruction.operands[2], ScalarType::b32), builder.getInt64Ty());
  Value* source = builder.CreateOr(a, builder.CreateShl(b, 32));
  Value* result = builder.getInt32(0);
  for (uint32_t index = 0; index < 4; ++index) {
    Value* selector = builder.CreateLShr(selectors, 4 * index);
    Value* byte_index = builder.CreateZExt(builder.CreateAnd(selector, 7), builder.getInt64Ty());
    Value* byte = builder.CreateTrunc(builder.CreateLShr(source, builder.CreateMul(byte_index, builder.getInt64(8))), builder.getInt8Ty());
    Value* replicate = builder.CreateTrunc(builder.CreateLShr(selector, 3), builder.getInt1Ty());
    Value* sign_fill = builder.CreateAShr(byte, 7);
    byte = builder.CreateSelect(replicate, sign_fill, byte);
    result = builder.CreateOr(result, builder.CreateShl(builder.CreateZExt(byte, builder.getInt32Ty()), 8 * index));
  }
  lowering.write(instruction.operands[0], result, ScalarType::b32);
}

// A u32 bit count as bmsk and szext read it: .clamp caps it at 32, .wrap takes it modulo 32.
Value* bit_count(FunctionLowering& lowering, const Instruction& instruction, const Operand& operand) {
  auto& builder = lowering.builder();
  Value* count = lowering.read(operand, ScalarType::u32);
  const auto& other = instruction.qualifiers.other;
  bool wrap = std::find(other.begin(), other.end(), "wrap") != other.end();
  return wrap ? builder.CreateAnd(count, 31) : builder.CreateBinaryIntrinsic(llvm::Intrinsic::umin, count, builder.getInt32(32));
}

// All ones shifted left by `amount` in 0..64 bits of a 64-bit word, so 32 and more give zero
// in the low half without the poison a 32-bit shift by 32 would be.
Value* ones_from(llvm::IRBuilder<>& builder, Value* amount) {
  return builder.CreateShl(builder.getInt64(~uint64_t{0}), builder.CreateZExt(amount, builder.getInt64Ty()));
}

// bmsk.mode.b32 d, a, b: the mask of b bits starting at bit a, cut off at bit 31.
void lower_bmsk(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  Value* start = bit_count(lowering, instruction, instruction.operands[1]);
  Value* width = bit_count(lowering, instruction, instruction.operands[2]);
  Value* mask = builder.CreateAnd(ones_from(builder, start), builder.CreateNot(ones_from(builder, builder.CreateAdd(start, width))));
  lowering.write(instruction.operands[0], builder.CreateTrunc(mask, builder.getInt32Ty()), ScalarType::b32);
}

// szext.mode.type d, a, b: the low b bits of a, sign-extended (.s32) or zero-extended (.u32);
// zero bits give zero.
void lower_szext(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  ScalarType type = type_of_instruction(instruction);
  Value* value = lowering.read(instruction.operands[1], type);
  Value* width = bit_count(lowering, instruction, instruction.operands[2]);
  // A zero width would shift by 32 (poison); it is masked here and replaced by zero below.
  Value* unused = builder.CreateAnd(builder.CreateSub(builder.getInt32(32), width), 31);
  Value* shifted = builder.CreateShl(value, unused);
  Value* extended = is_signed(type) ? builder.CreateAShr(shifted, unused) : builder.CreateLShr(shifted, unused);
  Value* result = builder.CreateSelect(builder.CreateICmpEQ(width, builder.getInt32(0)), builder.getInt32(0), extended);
  lowering.write(instruction.operands[0], result, type);
}

// lop3 d, a, b, c, table: any three-input function; bit i of the table is the result for
// a = i>>2&1, b = i>>1&1, c = i&1. lop3.or and lop3.and d|p, a, b, c, table, q: also
// p = (d != 0) or (and) q.
void lower_lop3(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  ScalarType type = type_of_instruction(instruction);
  const Operation combine = instruction.qualifiers.operation;
  const bool sets_predicate = combine != Operation::none;
  const auto& operands = instruction.operands;
  if (sets_predicate != (operands.size() == 6) || (sets_predicate && combine != Operation::or_ && combine != Operation::and_) ||
      (operands[0].kind == Operand::Kind::predicate_pair) != sets_predicate) {
    lowering.error(instruction.location, "expected lop3.b32 d, a, b, c, table or lop3.or/.and.b32 d|p, a, b, c, table, q");
    return;
  }
  const Operand& table_operand = instruction.operands[4];
  if (table_operand.kind != Operand::Kind::integer) {
    lowering.error(table_operand.location, "lop3's truth table must be a constant");
    return;
  }
  Value* inputs[3] = {lowering.read(instruction.operands[1], type), lowering.read(instruction.operands[2], type),
                      lowering.read(instruction.operands[3], type)};
  llvm::Type* integer = inputs[0]->getType();
  Value* result = constant(integer, 0);
  for (uint32_t minterm = 0; minterm < 8; ++minterm) {
    if (((table_operand.integer >> minterm) & 1) == 0) continue;
    Value* term = llvm::ConstantInt::getAllOnesValue(integer);
    for (uint32_t input = 0; input < 3; ++input) {
      bool set = ((minterm >> (2 - input)) & 1) != 0;
      term = builder.CreateAnd(term, set ? inputs[input] : builder.CreateNot(inputs[input]));
    }
    result = builder.CreateOr(result, term);
  }
  if (!sets_predicate) {
    lowering.write(operands[0], result, type);
    return;
  }
  lowering.write(operands[0].elements[0], result, type);
  Value* nonzero = builder.CreateICmpNE(result, constant(integer, 0));
  Value* other = lowering.read(operands[5], ScalarType::pred);
  lowering.write(operands[0].elements[1], combine == Operation::or_ ? builder.CreateOr(nonzero, other) : builder.CreateAnd(nonzero, other),
                 ScalarType::pred);
}

// The position of the n-th lowest set bit of the 32-bit m (n counts from 1), or all ones: a
// binary search for the lowest position whose bits up to and including it hold n set bits.
Value* nth_set_bit(llvm::IRBuilder<>& builder, Value* m, Value* n) {
  Value* position = builder.getInt32(0);
  for (uint32_t step = 16; step >= 1; step /= 2) {
    Value* candidate = builder.CreateAdd(position, builder.getInt32(step));
    Value* below = builder.CreateSub(builder.CreateShl(builder.getInt32(1), candidate), builder.getInt32(1));
    Value* count = builder.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, builder.CreateAnd(m, below));
    position = builder.CreateSelect(builder.CreateICmpULT(count, n), candidate, position);
  }
  Value* found = builder.CreateICmpUGE(builder.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, m), n);
  return builder.CreateSelect(found, position, builder.getInt32(0xFFFFFFFFu));
}

// fns.b32 d, mask, base, offset: the position of the |offset|-th set bit of mask counting from
// bit base upwards (offset > 0) or downwards (offset < 0); offset 0 asks whether bit base is
// set. All ones when there is no such bit, or base is outside 0..31 (measured on an H200).
void lower_fns(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  Value* mask = lowering.read(instruction.operands[1], ScalarType::b32);
  Value* base = lowering.read(instruction.operands[2], ScalarType::b32);
  Value* outside = builder.CreateICmpUGE(base, builder.getInt32(32));
  base = builder.CreateAnd(base, 31);
  Value* offset = lowering.read(instruction.operands[3], ScalarType::s32);
  Value* upwards = builder.CreateICmpSGT(offset, builder.getInt32(0));
  Value* count = builder.CreateBinaryIntrinsic(llvm::Intrinsic::abs, offset, builder.getFalse());
  count = builder.CreateSelect(builder.CreateICmpEQ(offset, builder.getInt32(0)), builder.getInt32(1), count);
  // Searching downwards is searching upwards in the bit-reversed mask from bit 31 - base.
  Value* start = builder.CreateSelect(upwards, base, builder.CreateSub(builder.getInt32(31), base));
  Value* oriented = builder.CreateSelect(upwards, mask, builder.CreateUnaryIntrinsic(llvm::Intrinsic::bitreverse, mask));
  Value* candidates = builder.CreateAnd(oriented, builder.CreateShl(builder.getInt32(0xFFFFFFFFu), start));
  // Offset 0 looks at bit base alone.
  candidates = builder.CreateSelect(builder.CreateICmpEQ(offset, builder.getInt32(0)),
                                    builder.CreateAnd(candidates, builder.CreateShl(builder.getInt32(1), start)), candidates);
  Value* position = nth_set_bit(builder, candidates, count);
  Value* none = builder.CreateICmpEQ(position, builder.getInt32(0xFFFFFFFFu));
  Value* result = builder.CreateSelect(builder.CreateOr(upwards, none), position, builder.CreateSub(builder.getInt32(31), position));
  result = builder.CreateSelect(outside, builder.getInt32(0xFFFFFFFFu), result);
  // An offset of INT_MIN, whose magnitude no 32-bit count holds, gives 0 (measured on an H200).
  result = builder.CreateSelect(builder.CreateICmpEQ(offset, builder.getInt32(0x80000000u)), builder.getInt32(0), result);
  lowering.write(instruction.operands[0], result, ScalarType::b32);
}

}  // namespace

void add_bitwise_lowerings(LoweringTable& table) {
  table["fns"] = lower_fns;
  table["and"] = lower_and;
  table["or"] = lower_or;
  table["xor"] = lower_xor;
  table["not"] = lower_not;
  table["cnot"] = lower_cnot;
  table["shl"] = lower_shl;
  table["shr"] = lower_shr;
  table["shf"] = lower_shf;
  table["popc"] = lower_popc;
  table["clz"] = lower_clz;
  table["brev"] = lower_brev;
  table["bfind"] = lower_bfind;
  table["bfe"] = lower_bfe;
  table["bfi"] = lower_bfi;
  table["prmt"] = lower_prmt;
  table["lop3"] = lower_lop3;
  table["bmsk"] = lower_bmsk;
  table["szext"] = lower_szext;
}

}  // namespace xcuda::ptx
