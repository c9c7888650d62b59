// cvt between integer widths, between integers and floats, and between float widths, with PTX's
// rounding modifiers, saturation and flush-to-zero; into and out of the narrow formats (f16,
// bf16, tf32, e4m3, e5m2, e3m2, e2m3, e2m1, packed in pairs) with .relu and .satfinite; with
// stochastic rounding (.rs) into pairs of f16 or bf16 and fours of the 8-, 6- and 4-bit formats;
// into and out of the ue8m0 scale factors; and cvt.pack.
#include <algorithm>
#include <tuple>

#include <llvm/IR/Intrinsics.h>

#include "check/qualifiers.h"
#include "lower/floating_point.h"
#include "lower/instruction_lowering.h"

namespace xcuda::ptx {
namespace {

using llvm::Value;

// Clamps an integer of `source` type into the range of `destination` (cvt.sat).
Value* saturate_integer(llvm::IRBuilder<>& builder, Value* value, ScalarType source, ScalarType destination) {
  uint32_t source_bits = bit_width(source);
  uint32_t destination_bits = bit_width(destination);
  uint32_t wide_bits = std::max(source_bits, destination_bits) + 1;
  llvm::Type* wide = builder.getIntNTy(wide_bits);
  Value* extended = builder.CreateIntCast(value, wide, is_signed(source));
  llvm::APInt minimum = is_signed(destination) ? llvm::APInt::getSignedMinValue(destination_bits).sext(wide_bits)
                                               : llvm::APInt::getZero(wide_bits);
  llvm::APInt maximum = is_signed(destination) ? llvm::APInt::getSignedMaxValue(destination_bits).sext(wide_bits)
                                               : llvm::APInt::getMaxValue(destination_bits).zext(wide_bits);
  extended = builder.CreateBinaryIntrinsic(llvm::Intrinsic::smax, extended, llvm::ConstantInt::get(wide, minimum));
  extended = builder.CreateBinaryIntrinsic(llvm::Intrinsic::smin, extended, llvm::ConstantInt::get(wide, maximum));
  return builder.CreateTrunc(extended, builder.getIntNTy(destination_bits));
}

std::optional<llvm::Intrinsic::ID> integral_rounding(Rounding rounding) {
  switch (rounding) {
    case Rounding::rni: return llvm::Intrinsic::roundeven;
    case Rounding::rzi: return llvm::Intrinsic::trunc;
    case Rounding::rmi: return llvm::Intrinsic::floor;
    case Rounding::rpi: return llvm::Intrinsic::ceil;
    default: return std::nullopt;
  }
}

// The packed formats that have no register type of their own: the checker passes them on as
// the bit type that holds them and by name.
const NarrowFormat* named_format(const Qualifiers& qualifiers) {
  static constexpr std::pair<std::string_view, const NarrowFormat*> formats[] = {
      {"tf32", &tf32_format},     {"e4m3x2", &e4m3_format}, {"e5m2x2", &e5m2_format}, {"e3m2x2", &e3m2_format},
      {"e2m3x2", &e2m3_format},   {"e2m1x2", &e2m1_format}, {"e4m3x4", &e4m3_format}, {"e5m2x4", &e5m2_format},
      {"e3m2x4", &e3m2_format},   {"e2m3x4", &e2m3_format}, {"e2m1x4", &e2m1_format}};
  for (const auto& [name, format] : formats)
    if (has_word(qualifiers, name)) return format;
  return nullptr;
}

// The format a cvt destination rounds into, with its lane count, or nullptr for the types that
// take the ordinary conversions.
const NarrowFormat* destination_format(const Qualifiers& qualifiers, const NarrowFormat* named, uint32_t& lanes) {
  ScalarType destination = qualifiers.types[0];
  lanes = packs_four(qualifiers) ? 4 : destination == ScalarType::f16x2 || destination == ScalarType::bf16x2 || (named != nullptr && named != &tf32_format) ? 2 : 1;
  if (named != nullptr && kind_of(destination) == TypeKind::bits) return named;
  if (destination == ScalarType::f16 || destination == ScalarType::f16x2) return &f16_format;
  if (destination == ScalarType::bf16 || destination == ScalarType::bf16x2) return &bf16_format;
  return nullptr;
}

// cvt.rs{.relu}{.satfinite}, from f32 only: .f16x2 and .bf16x2 from d, a, b, rbits, and the
// fours .e4m3x4 .e5m2x4 .e3m2x4 .e2m3x4 (in a .b32, .satfinite required) and .e2m1x4 (in a
// .b16) from d, {a, b, e, f}, rbits, a in the top bits. The ISA says which bits of rbits serve
// which value: of each half, the low 13 bits (f16x2) or all 16 (bf16x2), a from the upper half;
// for the fours the upper half serves a and b and the lower e and f, or (e2m1x4) the upper byte
// of each half a and b and the lower bytes e and f. It does not say where they meet the
// discarded bits: round_to_narrow adds them at the top, which for normal f16 and bf16 results
// (13 and 16 bits discarded) is the whole of them. sm_100a only: no hardware here to check.
void lower_stochastic_narrowing(FunctionLowering& lowering, const Instruction& instruction, const NarrowFormat& format,
                                uint32_t lanes) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  const bool fours = lanes == 4, satfinite = has_word(qualifiers, "satfinite");
  const bool valid = qualifiers.types.size() == 2 && qualifiers.types[1] == ScalarType::f32 &&
                     qualifiers.rounding == Rounding::none && !qualifiers.ftz && !qualifiers.saturate &&
                     (fours ? instruction.operands.size() == 3 && instruction.operands[1].kind == Operand::Kind::vector &&
                                  instruction.operands[1].elements.size() == 4 && satfinite
                            : instruction.operands.size() == 4 && lanes == 2 && format.storage_bits == 16);
  if (!valid) {
    lowering.error(instruction.location, "cvt.rs takes d, a, b, rbits into .f16x2 or .bf16x2, or d, {a, b, e, f}, rbits with "
                                         ".satfinite into .e4m3x4, .e5m2x4, .e3m2x4, .e2m3x4 or .e2m1x4, from .f32");
    return;
  }
  // The values from the lowest bits of d up: b, a for pairs; f, e, b, a for fours.
  std::vector<const Operand*> sources;
  if (fours)
    for (auto element = instruction.operands[1].elements.rbegin(); element != instruction.operands[1].elements.rend(); ++element)
      sources.push_back(&*element);
  else
    sources = {&instruction.operands[2], &instruction.operands[1]};
  llvm::Value* value = llvm::PoisonValue::get(llvm::FixedVectorType::get(builder.getFloatTy(), lanes));
  for (uint32_t lane = 0; lane < lanes; ++lane)
    value = builder.CreateInsertElement(value, read_float(lowering, *sources[lane], ScalarType::f32, false), lane);
  // Each value's random bits, in the same order, as (rbits >> shift) & mask.
  const bool brain = &format == &bf16_format;
  const uint32_t width = fours ? (&format == &e2m1_format ? 8 : 16) : brain ? 16 : 13;
  const std::vector<uint32_t> shifts = !fours ? std::vector<uint32_t>{0, 16}
                                       : width == 8 ? std::vector<uint32_t>{0, 16, 8, 24}
                                                    : std::vector<uint32_t>{0, 0, 16, 16};
  llvm::Value* random = builder.CreateVectorSplat(lanes, lowering.read(instruction.operands.back(), ScalarType::b32));
  std::vector<llvm::Constant*> shift_constants;
  for (uint32_t shift : shifts) shift_constants.push_back(builder.getInt32(shift));
  random = builder.CreateLShr(random, llvm::ConstantVector::get(shift_constants));
  random = builder.CreateAnd(random, builder.CreateVectorSplat(lanes, builder.getInt32((1u << width) - 1)));
  NarrowRounding mode{Rounding::rz, satfinite, has_word(qualifiers, "relu"), NanRule::canonical};
  mode.random_bits = random;
  mode.random_width = static_cast<int>(width);
  llvm::Value* bits = round_to_narrow(lowering, value, format, mode);
  uint32_t total = static_cast<uint32_t>(bits->getType()->getPrimitiveSizeInBits().getFixedValue());
  lowering.write(instruction.operands[0], builder.CreateBitCast(bits, builder.getIntNTy(total)), bits_of_width(total));
}

// cvt into f16, bf16, tf32 or a packed pair: d, a (one value, or a packed f16x2 source) or
// d, a, b (two f32 values; a goes to the upper half). One exact rounding serves every modifier.
void lower_narrowing(FunctionLowering& lowering, const Instruction& instruction, const NarrowFormat& format, uint32_t lanes) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  if (has_word(qualifiers, "rs")) {
    lower_stochastic_narrowing(lowering, instruction, format, lanes);
    return;
  }
  ScalarType destination = qualifiers.types[0];
  ScalarType source = qualifiers.types[1];
  bool two_sources = instruction.operands.size() == 3;
  if (two_sources != (lanes == 2 && source == ScalarType::f32) || qualifiers.rounding >= Rounding::rni || lanes == 4) {
    lowering.error(instruction.location, "this form of cvt into ." + std::string(name_of(destination)) + " is not valid");
    return;
  }
  llvm::Value* value;
  if (two_sources) {
    llvm::Value* high = read_float(lowering, instruction.operands[1], source, qualifiers.ftz);
    llvm::Value* low = read_float(lowering, instruction.operands[2], source, qualifiers.ftz);
    value = builder.CreateInsertElement(llvm::PoisonValue::get(llvm::FixedVectorType::get(high->getType(), 2)), low, uint64_t{0});
    value = builder.CreateInsertElement(value, high, uint64_t{1});
  } else {
    value = read_float(lowering, instruction.operands[1], source, qualifiers.ftz);
  }
  // .sat clamps to [0, 1], NaN to 0; clamping before the rounding gives the same result.
  if (qualifiers.saturate) value = saturate_float(lowering, value);
  NarrowRounding mode{qualifiers.rounding == Rounding::none ? Rounding::rn : qualifiers.rounding,
                      has_word(qualifiers, "satfinite"), has_word(qualifiers, "relu"), NanRule::canonical};
  if (source == ScalarType::f64) mode.nan = NanRule::keep_payload;
  if (&format == &tf32_format && mode.rounding == Rounding::rna) mode.nan = NanRule::truncate_bits;
  llvm::Value* bits = round_to_narrow(lowering, value, format, mode);
  uint32_t width = static_cast<uint32_t>(bits->getType()->getPrimitiveSizeInBits().getFixedValue());
  lowering.write(instruction.operands[0], builder.CreateBitCast(bits, builder.getIntNTy(width)), bits_of_width(width));
}

// cvt.rn{.relu}.f16x2.e4m3x2 (and .e5m2x2, .e3m2x2, .e2m3x2, .e2m1x2) d, a: both values of a,
// widened exactly.
void lower_widening(FunctionLowering& lowering, const Instruction& instruction, const NarrowFormat& format) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  if (qualifiers.types[0] != ScalarType::f16x2 || instruction.operands.size() != 2) {
    lowering.error(instruction.location, "cvt from a packed 8-, 6- or 4-bit format only produces .f16x2");
    return;
  }
  uint32_t width = 2 * format.storage_bits;
  llvm::Value* packed = lowering.read(instruction.operands[1], bits_of_width(std::max(width, 8u)));
  packed = builder.CreateTrunc(packed, builder.getIntNTy(width));
  llvm::Value* pair = builder.CreateBitCast(packed, llvm::FixedVectorType::get(builder.getIntNTy(format.storage_bits), 2));
  llvm::Value* value = widen_from_narrow(lowering.builder(), pair, format);
  llvm::Value* bits = round_to_narrow(lowering, value, f16_format, {Rounding::rn, false, has_word(qualifiers, "relu"), NanRule::canonical});
  lowering.write(instruction.operands[0], builder.CreateBitCast(bits, builder.getInt32Ty()), ScalarType::b32);
}

// ue8m0 is a bare exponent: code c stands for 2^(c - 127), 0xff for NaN; no sign, zero or infinity.
// cvt.{rz,rp}{.satfinite}.ue8m0x2.f32 d, a, b (a to the upper byte) and .ue8m0x2.bf16x2 d, a round
// each magnitude to a power of two; cvt.rn.bf16x2.ue8m0x2 d, a widens both codes exactly.
void lower_ue8m0(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  ScalarType destination = qualifiers.types[0];
  ScalarType source = qualifiers.types[1];
  auto pair_of = [](llvm::Type* element) { return llvm::FixedVectorType::get(element, 2); };
  llvm::Type* bytes = pair_of(builder.getInt8Ty());
  llvm::Type* words = pair_of(builder.getInt32Ty());
  auto word = [&](uint32_t constant) { return llvm::ConstantInt::get(words, constant); };
  bool relu = has_word(qualifiers, "relu");
  bool satfinite = has_word(qualifiers, "satfinite");
  if (destination == ScalarType::bf16x2) {
    if (qualifiers.rounding != Rounding::rn || instruction.operands.size() != 2 || relu || satfinite) {
      lowering.error(instruction.location, "cvt from .ue8m0x2 is only cvt.rn.bf16x2.ue8m0x2 d, a");
      return;
    }
    llvm::Value* codes = builder.CreateZExt(builder.CreateBitCast(lowering.read(instruction.operands[1], ScalarType::b16), bytes), words);
    llvm::Value* bits = builder.CreateShl(codes, 7);
    // Code 0, 2^-127, is a bf16 subnormal; 0xff becomes bf16's canonical NaN.
    bits = builder.CreateSelect(builder.CreateICmpEQ(codes, word(0)), word(0x0040), bits);
    bits = builder.CreateSelect(builder.CreateICmpEQ(codes, word(0xff)), word(0x7fff), bits);
    bits = builder.CreateTrunc(bits, pair_of(builder.getInt16Ty()));
    lowering.write(instruction.operands[0], builder.CreateBitCast(bits, builder.getInt32Ty()), ScalarType::b32);
    return;
  }
  bool two_sources = source == ScalarType::f32 && instruction.operands.size() == 3;
  bool packed_source = source == ScalarType::bf16x2 && instruction.operands.size() == 2;
  bool directed = qualifiers.rounding == Rounding::rz || qualifiers.rounding == Rounding::rp;
  if (relu) {
    lowering.error(instruction.location, "cvt with .relu into .ue8m0x2 is not supported yet");
    return;
  }
  if (!(two_sources || packed_source) || !directed) {
    lowering.error(instruction.location, "cvt into .ue8m0x2 takes .rz or .rp and two .f32 values or one .bf16x2");
    return;
  }
  llvm::Value* value;
  if (two_sources) {
    llvm::Value* high = read_float(lowering, instruction.operands[1], source, false);
    llvm::Value* low = read_float(lowering, instruction.operands[2], source, false);
    value = builder.CreateInsertElement(llvm::PoisonValue::get(pair_of(high->getType())), low, uint64_t{0});
    value = builder.CreateInsertElement(value, high, uint64_t{1});
  } else {
    value = widen_half(lowering, read_float(lowering, instruction.operands[1], source, false));
  }
  // The biased f32 exponent of |x| is already the code rounded toward zero; below 2^-127 there
  // is nothing smaller to round to, so code 0 stands for those and for zero.
  llvm::Value* magnitude = builder.CreateAnd(builder.CreateBitCast(value, words), word(0x7fffffff));
  llvm::Value* code = builder.CreateLShr(magnitude, 23);
  if (qualifiers.rounding == Rounding::rp) {
    llvm::Value* inexact = builder.CreateAnd(builder.CreateICmpNE(builder.CreateAnd(magnitude, word(0x7fffff)), word(0)),
                                             builder.CreateICmpUGT(magnitude, word(0x00400000)));
    code = builder.CreateAdd(code, builder.CreateZExt(inexact, words));
  }
  // Infinity and what rounds past 2^127 overflow to NaN, or to 2^127 with .satfinite.
  code = builder.CreateSelect(builder.CreateICmpUGE(code, word(0xff)), word(satfinite ? 0xfe : 0xff), code);
  code = builder.CreateSelect(builder.CreateICmpUGT(magnitude, word(0x7f800000)), word(0xff), code);
  llvm::Value* packed = builder.CreateBitCast(builder.CreateTrunc(code, bytes), builder.getInt16Ty());
  lowering.write(instruction.operands[0], packed, ScalarType::b16);
}

// cvt.pack.sat.convertType.s32 d, a, b (u16, s16) and cvt.pack.sat.convertType.s32.b32 d, a, b, c
// (u8 s8 u4 s4 u2 s2): a and b saturated to the narrow type, a above b, above them c's low bits.
void lower_cvt_pack(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  static constexpr std::tuple<std::string_view, uint32_t, bool> narrow_types[] = {
      {"u16", 16, false}, {"s16", 16, true}, {"u8", 8, false}, {"s8", 8, true},
      {"u4", 4, false},   {"s4", 4, true},   {"u2", 2, false}, {"s2", 2, true}};
  // .u4 .s4 .u2 .s2 have no register type and come as words.
  std::string_view name = name_of(qualifiers.types[0]);
  for (const std::string& word : qualifiers.other)
    if (word != "pack") name = word;
  uint32_t bits = 0;
  bool is_signed_result = false;
  for (const auto& [candidate, candidate_bits, candidate_signed] : narrow_types) {
    if (candidate == name) {
      bits = candidate_bits;
      is_signed_result = candidate_signed;
    }
  }
  bool has_c = instruction.operands.size() == 4;
  if (bits == 0 || !qualifiers.saturate || has_c != (bits < 16)) {
    lowering.error(instruction.location, "cvt.pack needs .sat, a .u16/.s16 result for two sources, or .u8 .s8 .u4 .s4 .u2 .s2 with a third");
    return;
  }
  auto saturate = [&](const Operand& operand) {
    llvm::Value* value = lowering.read(operand, ScalarType::s32);
    int64_t low = is_signed_result ? -(int64_t{1} << (bits - 1)) : 0;
    int64_t high = is_signed_result ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
    value = builder.CreateBinaryIntrinsic(llvm::Intrinsic::smax, value, builder.getInt32(static_cast<uint32_t>(low)));
    value = builder.CreateBinaryIntrinsic(llvm::Intrinsic::smin, value, builder.getInt32(static_cast<uint32_t>(high)));
    return builder.CreateAnd(value, builder.getInt32((1u << bits) - 1));
  };
  llvm::Value* result = builder.CreateOr(builder.CreateShl(saturate(instruction.operands[1]), bits), saturate(instruction.operands[2]));
  if (has_c) result = builder.CreateOr(result, builder.CreateShl(lowering.read(instruction.operands[3], ScalarType::b32), 2 * bits));
  lowering.write(instruction.operands[0], result, ScalarType::b32);
}

void lower_cvt(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  if (has_word(qualifiers, "pack")) {
    lower_cvt_pack(lowering, instruction);
    return;
  }
  if (qualifiers.types.size() != 2) {
    lowering.error(instruction.location, "cvt needs a destination and a source type");
    return;
  }
  if (has_word(qualifiers, "ue8m0x2")) {
    lower_ue8m0(lowering, instruction);
    return;
  }
  ScalarType destination = qualifiers.types[0];
  ScalarType source = qualifiers.types[1];
  const Operand& output = instruction.operands[0];
  const Operand& input = instruction.operands[1];
  bool float_destination = is_float(destination);
  bool float_source = is_float(source);
  Rounding rounding = qualifiers.rounding;
  bool integer_rounding = rounding >= Rounding::rni;
  const NarrowFormat* named = named_format(qualifiers);
  if (named != nullptr && kind_of(source) == TypeKind::bits) {
    if (packs_four(qualifiers)) {
      lowering.error(instruction.location, "cvt has no conversion from a packed four");
      return;
    }
    lower_widening(lowering, instruction, *named);
    return;
  }
  uint32_t lanes = 1;
  const NarrowFormat* narrow = destination_format(qualifiers, named, lanes);
  // A plain cvt.rn.f16.f32 stays one instruction on x86; every other rounding into a narrow
  // format takes the exact general path.
  bool plain_half = destination == ScalarType::f16 && source == ScalarType::f32 && qualifiers.other.empty() &&
                    (rounding == Rounding::rn || rounding == Rounding::none);
  if (narrow != nullptr && (float_source || kind_of(source) == TypeKind::bits) && !plain_half) {
    lower_narrowing(lowering, instruction, *narrow, lanes);
    return;
  }
  if (instruction.operands.size() != 2 || source == ScalarType::f16x2 || source == ScalarType::bf16x2 ||
      !qualifiers.other.empty()) {
    lowering.error(instruction.location, "this form of cvt is not supported yet");
    return;
  }

  if (!float_destination && !float_source) {
    Value* value = lowering.read(input, source);
    value = qualifiers.saturate ? saturate_integer(builder, value, source, destination)
                                : builder.CreateIntCast(value, lowering.type_of(destination), is_signed(source));
    lowering.write(output, value, destination);
    return;
  }

  if (float_source && !float_destination) {
    auto intrinsic = integral_rounding(rounding);
    if (!intrinsic) {
      lowering.error(instruction.location, "cvt from float to integer needs .rni, .rzi, .rmi or .rpi");
      return;
    }
    Value* value = read_float(lowering, input, source, qualifiers.ftz);
    // x86 has no integral rounding of 16-bit floats; f32 holds them exactly.
    if (bit_width(source) == 16) value = widen_half(lowering, value);
    Value* is_nan = builder.CreateFCmpUNO(value, value);
    value = builder.CreateUnaryIntrinsic(*intrinsic, value);
    // Out-of-range values saturate, as fptosi.sat does. NaN (measured on an H200) becomes 0
    // from f32 into 32 bits or fewer, and the lowest value's bit pattern (0x80…0) otherwise.
    llvm::Type* integer = lowering.type_of(destination);
    auto conversion = is_signed(destination) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    value = builder.CreateIntrinsic(conversion, {integer, value->getType()}, {value});
    uint32_t bits = bit_width(destination);
    bool nan_is_zero = source != ScalarType::f64 && bits <= 32;
    Value* nan_result = llvm::ConstantInt::get(integer, nan_is_zero ? llvm::APInt::getZero(bits) : llvm::APInt::getSignMask(bits));
    lowering.write(output, builder.CreateSelect(is_nan, nan_result, value), destination);
    return;
  }

  llvm::Type* target = lowering.type_of(destination);
  Value* result = nullptr;
  if (!float_source) {
    if (integer_rounding) {
      lowering.error(instruction.location, "cvt from integer to float takes .rn, .rz, .rm or .rp");
      return;
    }
    Value* value = lowering.read(input, source);
    bool signed_source = is_signed(source);
    result = with_rounding(lowering, rounding, signed_source ? "sitofp" : "uitofp", {value}, target,
                           [signed_source, target](llvm::IRBuilder<>& body, llvm::ArrayRef<Value*> arguments) {
                             return signed_source ? body.CreateSIToFP(arguments[0], target) : body.CreateUIToFP(arguments[0], target);
                           });
  } else {
    Value* value = read_float(lowering, input, source, qualifiers.ftz);
    uint32_t source_bits = bit_width(source);
    uint32_t destination_bits = bit_width(destination);
    if (integer_rounding) {
      if (source != destination) {
        lowering.error(instruction.location, "cvt with an integral rounding between float types of different widths");
        return;
      }
      result = canonicalize_nan(lowering, builder.CreateUnaryIntrinsic(*integral_rounding(rounding), value));
    } else if (destination == source) {
      result = value;
    } else if (destination_bits > source_bits) {
      // Widening is exact, any rounding modifier is moot. An f16 NaN, and with .ftz an f32 one,
      // becomes the canonical f32 NaN on the way; a bf16 NaN keeps its bits (measured on an H200).
      if (source_bits == 16) value = widen_half(lowering, value);
      if (source == ScalarType::f16) value = canonicalize_nan(lowering, value);
      if (qualifiers.ftz) value = canonicalize_nan(lowering, value);
      result = builder.CreateFPCast(value, target);
    } else {
      result = with_rounding(lowering, rounding, "fptrunc", {value}, target,
                             [target](llvm::IRBuilder<>& body, llvm::ArrayRef<Value*> arguments) {
                               return body.CreateFPTrunc(arguments[0], target);
                             });
    }
  }
  if (qualifiers.saturate) result = saturate_float(lowering, result);
  // Narrowing to a 16-bit float yields the canonical NaN (measured); f32 and f64 keep the
  // truncated payload as x86 does.
  if (bit_width(destination) == 16 && float_source) result = canonicalize_nan(lowering, result);
  write_float(lowering, output, result, destination, qualifiers.ftz);
}

}  // namespace

void add_conversion_lowerings(LoweringTable& table) { table["cvt"] = lower_cvt; }

}  // namespace xcuda::ptx
