// setp (with the optional .and/.or/.xor combining predicate and the p|q pair), set, selp, slct.
// On .f16x2/.bf16x2 operands both compare lane by lane: setp's p takes the low halves' outcome
// and q the high halves', set writes each lane's outcome into the same half of d.
#include <bit>

#include <llvm/IR/Intrinsics.h>

#include "lower/floating_point.h"
#include "lower/instruction_lowering.h"

namespace xcuda::ptx {
namespace {

using llvm::CmpInst;
using llvm::Value;

std::optional<CmpInst::Predicate> integer_predicate(Comparison comparison, bool is_signed_type) {
  switch (comparison) {
    case Comparison::eq: return CmpInst::ICMP_EQ;
    case Comparison::ne: return CmpInst::ICMP_NE;
    case Comparison::lt: return is_signed_type ? CmpInst::ICMP_SLT : CmpInst::ICMP_ULT;
    case Comparison::le: return is_signed_type ? CmpInst::ICMP_SLE : CmpInst::ICMP_ULE;
    case Comparison::gt: return is_signed_type ? CmpInst::ICMP_SGT : CmpInst::ICMP_UGT;
    case Comparison::ge: return is_signed_type ? CmpInst::ICMP_SGE : CmpInst::ICMP_UGE;
    case Comparison::lo: return CmpInst::ICMP_ULT;
    case Comparison::ls: return CmpInst::ICMP_ULE;
    case Comparison::hi: return CmpInst::ICMP_UGT;
    case Comparison::hs: return CmpInst::ICMP_UGE;
    default: return std::nullopt;
  }
}

std::optional<CmpInst::Predicate> float_predicate(Comparison comparison) {
  switch (comparison) {
    case Comparison::eq: return CmpInst::FCMP_OEQ;
    case Comparison::ne: return CmpInst::FCMP_ONE;
    case Comparison::lt: return CmpInst::FCMP_OLT;
    case Comparison::le: return CmpInst::FCMP_OLE;
    case Comparison::gt: return CmpInst::FCMP_OGT;
    case Comparison::ge: return CmpInst::FCMP_OGE;
    case Comparison::equ: return CmpInst::FCMP_UEQ;
    case Comparison::neu: return CmpInst::FCMP_UNE;
    case Comparison::ltu: return CmpInst::FCMP_ULT;
    case Comparison::leu: return CmpInst::FCMP_ULE;
    case Comparison::gtu: return CmpInst::FCMP_UGT;
    case Comparison::geu: return CmpInst::FCMP_UGE;
    case Comparison::num: return CmpInst::FCMP_ORD;
    case Comparison::nan: return CmpInst::FCMP_UNO;
    default: return std::nullopt;
  }
}

Value* combine(llvm::IRBuilder<>& builder, Operation operation, Value* comparison, Value* other) {
  switch (operation) {
    case Operation::and_: return builder.CreateAnd(comparison, other);
    case Operation::or_: return builder.CreateOr(comparison, other);
    case Operation::xor_: return builder.CreateXor(comparison, other);
    default: return comparison;
  }
}

// The comparison `a op b` of operands 1 and 2 in `type` (an i1, or two for packed halves), or
// nullptr after reporting why not.
Value* compare_operands(FunctionLowering& lowering, const Instruction& instruction, ScalarType type) {
  const Qualifiers& qualifiers = instruction.qualifiers;
  bool floating = is_float(type);
  auto predicate = floating ? float_predicate(qualifiers.comparison) : integer_predicate(qualifiers.comparison, is_signed(type));
  if (!predicate) {
    lowering.error(instruction.location, instruction.opcode + " needs a comparison valid for ." + std::string(name_of(type)));
    return nullptr;
  }
  auto& builder = lowering.builder();
  auto read = [&](const Operand& operand) {
    if (!floating) return lowering.read(operand, type);
    Value* value = read_float(lowering, operand, type, qualifiers.ftz);
    return is_half_type(type) ? widen_half(lowering, value) : value;  // f32 holds them exactly
  };
  Value* a = read(instruction.operands[1]);
  Value* b = read(instruction.operands[2]);
  return floating ? builder.CreateFCmp(*predicate, a, b) : builder.CreateICmp(*predicate, a, b);
}

// The optional combining predicate (operand 3), or nullptr when the instruction has none;
// `ok` turns false after reporting an operand count that does not match the modifiers.
Value* combining_predicate(FunctionLowering& lowering, const Instruction& instruction, bool& ok) {
  bool combines = instruction.qualifiers.operation != Operation::none;
  ok = combines == (instruction.operands.size() == 4);
  if (!ok) {
    lowering.error(instruction.location, instruction.opcode + (combines ? " with .and/.or/.xor needs a predicate operand"
                                                                        : " takes a fourth operand only with .and/.or/.xor"));
    return nullptr;
  }
  return combines ? lowering.read(instruction.operands[3], ScalarType::pred) : nullptr;
}

void lower_setp(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  Value* comparison = compare_operands(lowering, instruction, qualifiers.types[0]);
  if (comparison == nullptr) return;
  bool ok = true;
  Value* other = combining_predicate(lowering, instruction, ok);
  if (!ok) return;
  const Operand& destination = instruction.operands[0];
  if (comparison->getType()->isVectorTy()) {
    if (destination.kind != Operand::Kind::predicate_pair) {
      lowering.error(instruction.location, "setp on packed halves needs a p|q destination");
      return;
    }
    for (uint64_t lane = 0; lane < 2; ++lane)
      lowering.write(destination.elements[lane], combine(builder, qualifiers.operation, builder.CreateExtractElement(comparison, lane), other),
                     ScalarType::pred);
    return;
  }
  if (destination.kind == Operand::Kind::predicate_pair) {
    lowering.write(destination.elements[0], combine(builder, qualifiers.operation, comparison, other), ScalarType::pred);
    lowering.write(destination.elements[1], combine(builder, qualifiers.operation, builder.CreateNot(comparison), other),
                   ScalarType::pred);
    return;
  }
  lowering.write(destination, combine(builder, qualifiers.operation, comparison, other), ScalarType::pred);
}

// set.cmp.dtype.stype d, a, b: like setp, but the outcome is a value: all ones (integer
// destinations) or 1.0 (float ones), and zero when false. Packed sources give one outcome per
// half of d: 1.0 in each half of an .f16x2/.bf16x2 d, 0xFFFF in each half of a .u32/.s32 one.
void lower_set(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  ScalarType destination = qualifiers.types.empty() ? ScalarType::b32 : qualifiers.types[0];
  bool packed_source = qualifiers.types.size() == 2 && (qualifiers.types[1] == ScalarType::f16x2 || qualifiers.types[1] == ScalarType::bf16x2);
  bool packed_destination = destination == ScalarType::f16x2 || destination == ScalarType::bf16x2;
  bool valid_destination = kind_of(destination) != TypeKind::bits && kind_of(destination) != TypeKind::predicate &&
                           bit_width(destination) >= 16 && bit_width(destination) <= 32 && destination != ScalarType::f64;
  if (qualifiers.types.size() != 2 || !valid_destination || packed_destination != (packed_source && is_float(destination)) ||
      (packed_source && bit_width(destination) != 32)) {
    lowering.error(instruction.location, "set needs a destination type (.u16 .s16 .u32 .s32 .f16 .bf16 .f32, or .f16x2 "
                                         ".bf16x2 .u32 .s32 for packed sources) and a source type");
    return;
  }
  Value* comparison = compare_operands(lowering, instruction, qualifiers.types[1]);
  if (comparison == nullptr) return;
  bool ok = true;
  Value* other = combining_predicate(lowering, instruction, ok);
  if (!ok) return;
  if (other != nullptr && packed_source) other = builder.CreateVectorSplat(2, other);
  Value* outcome = combine(builder, qualifiers.operation, comparison, other);
  uint32_t lane_bits = packed_source ? 16 : bit_width(destination);
  uint64_t true_bits = ~uint64_t{0} >> (64 - lane_bits);
  if (destination == ScalarType::f32) true_bits = std::bit_cast<uint32_t>(1.0f);
  if (destination == ScalarType::f16 || destination == ScalarType::f16x2) true_bits = 0x3C00;
  if (destination == ScalarType::bf16 || destination == ScalarType::bf16x2) true_bits = 0x3F80;
  llvm::Type* lane_type = builder.getIntNTy(lane_bits);
  if (packed_source) lane_type = llvm::FixedVectorType::get(lane_type, 2);
  Value* lanes = builder.CreateSelect(outcome, llvm::ConstantInt::get(lane_type, true_bits), llvm::ConstantInt::get(lane_type, 0));
  Value* bits = builder.CreateBitCast(lanes, builder.getIntNTy(bit_width(destination)));
  write_float(lowering, instruction.operands[0], bits, destination, false);
}

void lower_selp(FunctionLowering& lowering, const Instruction& instruction) {
  ScalarType type = instruction.qualifiers.types[0];
  Value* a = lowering.read(instruction.operands[1], type);
  Value* b = lowering.read(instruction.operands[2], type);
  Value* condition = lowering.read(instruction.operands[3], ScalarType::pred);
  lowering.write(instruction.operands[0], lowering.builder().CreateSelect(condition, a, b), type);
}

// slct.dtype.ctype d, a, b, c: a when c >= 0, else b; a NaN c compares unordered and picks b,
// and -0.0 picks a.
void lower_slct(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  ScalarType type = qualifiers.types[0];
  ScalarType control_type = qualifiers.types.size() == 2 ? qualifiers.types[1] : ScalarType::s32;
  if (control_type != ScalarType::s32 && control_type != ScalarType::f32) {
    lowering.error(instruction.location, "slct's last type must be .s32 or .f32");
    return;
  }
  Value* a = lowering.read(instruction.operands[1], type);
  Value* b = lowering.read(instruction.operands[2], type);
  Value* condition;
  if (control_type == ScalarType::f32) {
    Value* control = read_float(lowering, instruction.operands[3], control_type, qualifiers.ftz);
    condition = builder.CreateFCmpOGE(control, llvm::ConstantFP::get(control->getType(), 0.0));
  } else {
    condition = builder.CreateICmpSGE(lowering.read(instruction.operands[3], control_type), builder.getInt32(0));
  }
  lowering.write(instruction.operands[0], builder.CreateSelect(condition, a, b), type);
}

// testp.op p, a: classifies a float.
void lower_testp(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  ScalarType type = instruction.qualifiers.types[0];
  if (instruction.qualifiers.other.size() != 1 || (type != ScalarType::f32 && type != ScalarType::f64)) {
    lowering.error(instruction.location, "testp needs one test and .f32 or .f64");
    return;
  }
  const std::string& test = instruction.qualifiers.other[0];
  Value* value = read_float(lowering, instruction.operands[1], type, false);
  Value* magnitude = builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, value);
  llvm::Type* float_type = value->getType();
  Value* infinity = llvm::ConstantFP::getInfinity(float_type);
  Value* smallest_normal = llvm::ConstantFP::get(float_type, type == ScalarType::f32 ? 0x1p-126 : 0x1p-1022);
  Value* result;
  if (test == "finite") result = builder.CreateFCmpOLT(magnitude, infinity);
  else if (test == "infinite") result = builder.CreateFCmpOEQ(magnitude, infinity);
  else if (test == "number") result = builder.CreateFCmpORD(value, value);
  else if (test == "notanumber") result = builder.CreateFCmpUNO(value, value);
  // Zero counts as normal (measured on an H200): normal is every finite value not subnormal.
  else if (test == "normal") result = builder.CreateAnd(builder.CreateOr(builder.CreateFCmpOGE(magnitude, smallest_normal),
                                                                         builder.CreateFCmpOEQ(magnitude, llvm::ConstantFP::get(float_type, 0.0))),
                                                        builder.CreateFCmpOLT(magnitude, infinity));
  else result = builder.CreateAnd(builder.CreateFCmpOLT(magnitude, smallest_normal), builder.CreateFCmpONE(magnitude, llvm::ConstantFP::get(float_type, 0.0)));
  lowering.write(instruction.operands[0], result, ScalarType::pred);
}

}  // namespace

void add_comparison_lowerings(LoweringTable& table) {
  table["setp"] = lower_setp;
  table["set"] = lower_set;
  table["selp"] = lower_selp;
  table["slct"] = lower_slct;
  table["testp"] = lower_testp;
}

}  // namespace xcuda::ptx
