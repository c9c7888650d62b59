// cvt between integer widths, between integers and floats, and between float widths, with PTX's
// rounding modifiers, saturation and flush-to-zero; and cvt.rn packing two f32 into f16x2/bf16x2.
#include <llvm/IR/Intrinsics.h>

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

// cvt.rn.f16x2.f32 d, a, b (and .bf16x2): a rounded into the upper half of d, b into the lower.
void lower_pack(FunctionLowering& lowering, const Instruction& instruction, ScalarType destination) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  if (instruction.operands.size() != 3 || qualifiers.rounding != Rounding::rn || !qualifiers.other.empty() ||
      qualifiers.saturate || qualifiers.ftz) {
    lowering.error(instruction.location, "this form of cvt is not supported yet");
    return;
  }
  Value* packed = builder.getInt32(0);
  for (uint32_t index = 0; index < 2; ++index) {
    Value* value = read_float(lowering, instruction.operands[1 + index], ScalarType::f32, false);
    Value* half_bits;
    if (destination == ScalarType::f16x2) {
      Value* rounded = canonicalize_nan(lowering, builder.CreateFPTrunc(value, builder.getHalfTy()));
      half_bits = builder.CreateZExt(builder.CreateBitCast(rounded, builder.getInt16Ty()), builder.getInt32Ty());
    } else {
      // bf16 is the top half of an f32, so rounding to nearest even is integer arithmetic on the
      // bits; LLVM's x86 fptrunc to bfloat flushes f32 subnormals, which the GPU keeps.
      Value* pattern = builder.CreateBitCast(value, builder.getInt32Ty());
      Value* tie_to_even = builder.CreateAnd(builder.CreateLShr(pattern, 16), 1);
      Value* rounded = builder.CreateLShr(builder.CreateAdd(pattern, builder.CreateAdd(tie_to_even, builder.getInt32(0x7FFF))), 16);
      half_bits = builder.CreateSelect(builder.CreateFCmpUNO(value, value), builder.getInt32(0x7FFF), rounded);
    }
    packed = builder.CreateOr(packed, builder.CreateShl(half_bits, index == 0 ? 16 : 0));
  }
  lowering.write(instruction.operands[0], packed, ScalarType::b32);
}

void lower_cvt(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  if (qualifiers.types.size() != 2) {
    lowering.error(instruction.location, "cvt needs a destination and a source type");
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
  if ((destination == ScalarType::f16x2 || destination == ScalarType::bf16x2) && source == ScalarType::f32) {
    lower_pack(lowering, instruction, destination);
    return;
  }
  if (instruction.operands.size() != 2) {
    lowering.error(instruction.location, "cvt takes two operands except when it packs two f32 into halves");
    return;
  }
  if (destination == ScalarType::f16x2 || destination == ScalarType::bf16x2 || source == ScalarType::f16x2 ||
      source == ScalarType::bf16x2 || !qualifiers.other.empty()) {
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
      result = builder.CreateUnaryIntrinsic(*integral_rounding(rounding), value);
    } else if (destination == source) {
      result = value;
    } else if (destination_bits > source_bits) {
      result = builder.CreateFPExt(value, target);  // exact, any rounding modifier is moot
    } else {
      if (destination_bits < 32 && rounding != Rounding::none && rounding != Rounding::rn) {
        lowering.error(instruction.location, "cvt to a 16-bit float with directed rounding is not supported yet");
        return;
      }
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
