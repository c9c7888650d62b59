// Video instructions. The scalar ones (vadd vsub vabsdiff vmin vmax vshl vshr vmad vset) take a
// byte, half-word or the word of each source (a.b1, b.h0), compute exactly, optionally saturate,
// then apply a secondary operation with c (.add .min .max) or merge the result into a byte or
// half-word of c (d.b2). The SIMD ones (vadd2 … vset2 on half-word lanes, vadd4 … vset4 on byte
// lanes) pick each lane's element from the eight bytes or four half-words of b:a, then merge
// the lanes into c under a mask (d.h1) or add them to c (.add). Semantics per the PTX ISA's
// pseudocode, but where the H200 differs from it (the scalar forms' saturation, merges and
// secondary .min/.max, vshl's range, vmad's c and whole-word sources), as measured by
// tests/conformance's video cases.
#include <algorithm>

#include <llvm/IR/Intrinsics.h>

#include "lower/instruction_lowering.h"

namespace xcuda::ptx {
namespace {

using llvm::Value;

// A selector written after a register: `b0`..`b3`, `h0`, `h1` for the scalar forms; for the
// SIMD forms `h` or `b` then one digit per lane, highest lane first.
struct Selector {
  uint32_t element_bits = 32;  // 8 (b), 16 (h) or 32 (none)
  std::vector<uint32_t> elements;  // lane 0 first
};

std::optional<Selector> parse_selector(std::string_view text, uint32_t lanes, uint32_t highest) {
  Selector selector;
  if (text.empty()) return selector;
  selector.element_bits = text[0] == 'b' ? 8 : text[0] == 'h' ? 16 : 0;
  if (selector.element_bits == 0 || text.size() < 2 || text.size() - 1 > lanes) return std::nullopt;
  for (size_t position = text.size() - 1; position >= 1; --position) {
    char digit = text[position];
    if (digit < '0' || static_cast<uint32_t>(digit - '0') > highest) return std::nullopt;
    selector.elements.push_back(static_cast<uint32_t>(digit - '0'));
  }
  return selector;
}

// What becomes of a scalar result on the H200, by instruction: vadd and vsub give a 32-bit word
// that a secondary .min/.max reads as signed; vabsdiff an unsigned word; vmin, vmax and vset
// their exact value. vshl and vshr also give a signed word, but saturate it (unsigned) from a
// 34-bit intermediate at both ends, where the others only raise negative results to zero.
enum class ScalarResult { signed_word, unsigned_word, exact, shifted };

class VideoLowering {
 public:
  VideoLowering(FunctionLowering& lowering, const Instruction& instruction)
      : lowering_(lowering), instruction_(instruction), builder_(lowering.builder()) {}

  // The scalar forms; `operation` computes tmp from the two selected, extended sources. With
  // `secondary`, a fourth operand c takes part as optSecondaryOp or optMerge (vmad adds its c
  // itself).
  template <typename Operation>
  void scalar(ScalarType destination, ScalarType a_type, ScalarType b_type, bool saturable, bool secondary,
              ScalarResult kind, const Operation& operation) {
    auto d_selector = scalar_selector(0);
    auto a_selector = scalar_selector(1);
    auto b_selector = scalar_selector(2);
    if (!d_selector || !a_selector || !b_selector) return;
    Value* a = part(lowering_.read(operand(1), ScalarType::u32), *a_selector, is_signed(a_type));
    Value* b = part(lowering_.read(operand(2), ScalarType::u32), *b_selector, is_signed(b_type));
    Value* result = operation(a, b);
    bool destination_signed = is_signed(destination);
    bool saturated = saturable && instruction_.qualifiers.saturate;
    if (saturated) result = saturate(result, *d_selector, destination_signed, kind);
    Value* word = secondary && instruction_.operands.size() == 4 ? finish_scalar(result, *d_selector, destination_signed, saturated, kind)
                                                                 : builder_.CreateTrunc(result, builder_.getInt32Ty());
    lowering_.write(operand(0), word, ScalarType::u32);
  }

  // The SIMD forms over `lanes` lanes; `operation` computes each lane from its two elements.
  template <typename Operation>
  void simd(uint32_t lanes, ScalarType destination, ScalarType a_type, ScalarType b_type, bool saturable,
            const Operation& operation) {
    uint32_t bits = 32 / lanes;
    if (instruction_.operands.size() != 4) {
      lowering_.error(instruction_.location, "'" + instruction_.opcode + "' takes 4 operands");
      return;
    }
    std::string all_lanes = lanes == 2 ? "h10" : "b3210";
    auto mask = simd_selector(0, lanes, lanes - 1, all_lanes);
    auto a_selector = simd_selector(1, lanes, 2 * lanes - 1, all_lanes);
    auto b_selector = simd_selector(2, lanes, 2 * lanes - 1, lanes == 2 ? "h32" : "b7654");
    if (!mask || !a_selector || !b_selector) return;
    if (mask->element_bits != bits || a_selector->elements.size() != lanes || b_selector->elements.size() != lanes ||
        a_selector->element_bits != bits || b_selector->element_bits != bits) {
      lowering_.error(instruction_.location, "'" + instruction_.opcode + "' takes " + (lanes == 2 ? "half-word" : "byte") +
                                                 " selectors with one digit per lane");
      return;
    }
    Value* a = lowering_.read(operand(1), ScalarType::u32);
    Value* b = lowering_.read(operand(2), ScalarType::u32);
    Value* c = lowering_.read(operand(3), ScalarType::u32);
    llvm::Type* i64 = builder_.getInt64Ty();
    Value* pair = builder_.CreateOr(builder_.CreateZExt(a, i64), builder_.CreateShl(builder_.CreateZExt(b, i64), 32));
    bool accumulate = has_word(instruction_, "add");
    bool destination_signed = is_signed(destination);
    Value* result = accumulate ? builder_.CreateSExt(c, i64) : builder_.getInt64(0);
    for (uint32_t lane = 0; lane < lanes; ++lane) {
      Value* element_a = element(pair, bits, a_selector->elements[lane], is_signed(a_type));
      Value* element_b = element(pair, bits, b_selector->elements[lane], is_signed(b_type));
      Value* value = operation(element_a, element_b);
      if (saturable && instruction_.qualifiers.saturate)
        value = clamp(value, destination_signed ? -(int64_t{1} << (bits - 1)) : 0,
                      destination_signed ? (int64_t{1} << (bits - 1)) - 1 : static_cast<int64_t>((uint64_t{1} << bits) - 1));
      bool selected = std::find(mask->elements.begin(), mask->elements.end(), lane) != mask->elements.end();
      if (accumulate) {
        if (selected) result = builder_.CreateAdd(result, value);
        continue;
      }
      Value* lane_value = selected ? value : element(builder_.CreateZExt(c, i64), bits, lane, false);
      Value* field = builder_.CreateAnd(lane_value, builder_.getInt64((uint64_t{1} << bits) - 1));
      result = builder_.CreateOr(result, builder_.CreateShl(field, bits * lane));
    }
    lowering_.write(operand(0), builder_.CreateTrunc(result, builder_.getInt32Ty()), ScalarType::u32);
  }

  Value* compare(Value* a, Value* b) {
    llvm::CmpInst::Predicate predicate = llvm::CmpInst::ICMP_EQ;
    switch (instruction_.qualifiers.comparison) {
      case Comparison::eq: predicate = llvm::CmpInst::ICMP_EQ; break;
      case Comparison::ne: predicate = llvm::CmpInst::ICMP_NE; break;
      case Comparison::lt: predicate = llvm::CmpInst::ICMP_SLT; break;
      case Comparison::le: predicate = llvm::CmpInst::ICMP_SLE; break;
      case Comparison::gt: predicate = llvm::CmpInst::ICMP_SGT; break;
      case Comparison::ge: predicate = llvm::CmpInst::ICMP_SGE; break;
      default: lowering_.error(instruction_.location, "'" + instruction_.opcode + "' compares with .eq .ne .lt .le .gt or .ge");
    }
    return builder_.CreateZExt(builder_.CreateICmp(predicate, a, b), builder_.getInt64Ty());
  }

  Value* clamp(Value* value, int64_t low, int64_t high) {
    value = builder_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, value, llvm::ConstantInt::getSigned(value->getType(), low));
    return builder_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, value, llvm::ConstantInt::getSigned(value->getType(), high));
  }

  const Operand& operand(size_t index) const { return instruction_.operands[index]; }
  llvm::IRBuilder<>& builder() { return builder_; }

 private:
  std::optional<Selector> scalar_selector(size_t index) {
    const std::string& text = operand(index).component;
    auto selector = parse_selector(text, 1, text.starts_with("h") ? 1 : 3);
    if (!selector) lowering_.error(operand(index).location, "'." + text + "' is not a selector of '" + instruction_.opcode + "'");
    return selector;
  }

  std::optional<Selector> simd_selector(size_t index, uint32_t lanes, uint32_t highest, const std::string& default_text) {
    const std::string& text = operand(index).component;
    auto selector = parse_selector(text.empty() ? default_text : text, lanes, highest);
    if (!selector) lowering_.error(operand(index).location, "'." + text + "' is not a selector of '" + instruction_.opcode + "'");
    return selector;
  }

  // The selected byte, half-word or word of `word`, extended to 64 bits.
  Value* part(Value* word, const Selector& selector, bool sign) {
    if (selector.elements.empty()) return builder_.CreateIntCast(word, builder_.getInt64Ty(), sign);
    return element(builder_.CreateZExt(word, builder_.getInt64Ty()), selector.element_bits, selector.elements[0], sign);
  }

  Value* element(Value* bits64, uint32_t bits, uint32_t index, bool sign) {
    Value* shifted = builder_.CreateLShr(bits64, bits * index);
    return builder_.CreateIntCast(builder_.CreateTrunc(shifted, builder_.getIntNTy(bits)), builder_.getInt64Ty(), sign);
  }

  // .sat: a signed destination is clamped to its range, an unsigned one raised from below zero
  // (shifts also clamped at 2^32-1; the others keep the low 32 bits). Saturating into a merged
  // byte or half-word keeps an exact result between zero and the field's largest value and
  // turns any other, negative ones too, into that largest value.
  Value* saturate(Value* result, const Selector& destination, bool destination_signed, ScalarResult kind) {
    if (!destination.elements.empty()) {
      uint32_t bits = destination.element_bits - (destination_signed ? 1 : 0);
      return builder_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, result, builder_.getInt64((uint64_t{1} << bits) - 1));
    }
    if (destination_signed) return clamp(result, INT32_MIN, INT32_MAX);
    if (kind == ScalarResult::shifted) return clamp(result, 0, UINT32_MAX);
    Value* negative = builder_.CreateICmpSLT(result, builder_.getInt64(0));
    return builder_.CreateSelect(negative, builder_.getInt64(0), builder_.CreateAnd(result, builder_.getInt64(UINT32_MAX)));
  }

  // optSecondaryOp and optMerge: with a destination selector the result is merged into c,
  // otherwise .add/.min/.max combine it with c.
  Value* finish_scalar(Value* result, const Selector& destination, bool destination_signed, bool saturated, ScalarResult kind) {
    llvm::Type* i32 = builder_.getInt32Ty();
    llvm::Type* i64 = builder_.getInt64Ty();
    Value* c = lowering_.read(operand(3), ScalarType::u32);
    if (!destination.elements.empty()) {
      uint32_t shift = destination.element_bits * destination.elements[0];
      uint32_t field = static_cast<uint32_t>(((uint64_t{1} << destination.element_bits) - 1) << shift);
      // Under .sat the H200 writes zero into .h1, signed or not, whatever the result.
      bool zeroed = saturated && destination.element_bits == 16 && destination.elements[0] == 1;
      Value* placed = zeroed ? builder_.getInt32(0) : builder_.CreateShl(builder_.CreateTrunc(result, i32), shift);
      return builder_.CreateOr(builder_.CreateAnd(placed, field), builder_.CreateAnd(c, ~field));
    }
    if (has_word(instruction_, "add")) return builder_.CreateAdd(builder_.CreateTrunc(result, i32), c);
    bool minimum = has_word(instruction_, "min");
    if (!minimum && !has_word(instruction_, "max")) {
      lowering_.error(instruction_.location, "'" + instruction_.opcode + "' with four operands needs .add, .min, .max or a destination selector");
      return builder_.CreateTrunc(result, i32);
    }
    // Both sides as 33-bit values, compared with the destination's signedness.
    Value* value = result;
    if (kind == ScalarResult::signed_word || kind == ScalarResult::shifted) value = builder_.CreateSExt(builder_.CreateTrunc(result, i32), i64);
    if (kind == ScalarResult::unsigned_word) value = builder_.CreateAnd(result, builder_.getInt64(UINT32_MAX));
    if (!destination_signed) value = builder_.CreateAnd(value, builder_.getInt64((uint64_t{1} << 33) - 1));
    Value* other = builder_.CreateIntCast(c, i64, destination_signed);
    using llvm::Intrinsic::ID;
    ID operation = minimum ? (destination_signed ? ID(llvm::Intrinsic::smin) : ID(llvm::Intrinsic::umin))
                           : (destination_signed ? ID(llvm::Intrinsic::smax) : ID(llvm::Intrinsic::umax));
    return builder_.CreateTrunc(builder_.CreateBinaryIntrinsic(operation, value, other), i32);
  }

  FunctionLowering& lowering_;
  const Instruction& instruction_;
  llvm::IRBuilder<>& builder_;
};

enum class VideoOperation { add, subtract, absolute_difference, minimum, maximum, average };

Value* apply(VideoLowering& video, VideoOperation operation, Value* a, Value* b) {
  auto& builder = video.builder();
  switch (operation) {
    case VideoOperation::add: return builder.CreateAdd(a, b);
    case VideoOperation::subtract: return builder.CreateSub(a, b);
    case VideoOperation::absolute_difference:
      return builder.CreateBinaryIntrinsic(llvm::Intrinsic::abs, builder.CreateSub(a, b), builder.getFalse());
    case VideoOperation::minimum: return builder.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, b);
    case VideoOperation::maximum: return builder.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, b);
    case VideoOperation::average: {
      // Rounds half away from zero for non-negative sums, down otherwise.
      Value* sum = builder.CreateAdd(a, b);
      Value* rounded = builder.CreateSelect(builder.CreateICmpSGE(sum, builder.getInt64(0)), builder.CreateAdd(sum, builder.getInt64(1)), sum);
      return builder.CreateAShr(rounded, 1);
    }
  }
  return a;
}

const std::vector<ScalarType>& types_of(const Instruction& instruction) { return instruction.qualifiers.types; }

bool has_types(FunctionLowering& lowering, const Instruction& instruction, size_t count) {
  const auto& types = types_of(instruction);
  bool integer_words = std::all_of(types.begin(), types.end(), [](ScalarType type) {
    return type == ScalarType::u32 || type == ScalarType::s32;
  });
  if (types.size() == count && integer_words) return true;
  lowering.error(instruction.location, "'" + instruction.opcode + "' takes " + std::to_string(count) + " types, each .u32 or .s32");
  return false;
}

template <VideoOperation operation>
void lower_scalar(FunctionLowering& lowering, const Instruction& instruction) {
  if (!has_types(lowering, instruction, 3)) return;
  VideoLowering video(lowering, instruction);
  const auto& types = types_of(instruction);
  ScalarResult kind = operation == VideoOperation::add || operation == VideoOperation::subtract ? ScalarResult::signed_word
                      : operation == VideoOperation::absolute_difference                      ? ScalarResult::unsigned_word
                                                                                               : ScalarResult::exact;
  video.scalar(types[0], types[1], types[2], true, true, kind, [&](Value* a, Value* b) { return apply(video, operation, a, b); });
}

// vshl/vshr: the shift amount, an unsigned selection of b, is clamped to 32 or wrapped to 0..31.
// A left shift keeps 34 bits, the highest as its sign (a << 32 saturates by a's bit 1).
template <bool left>
void lower_scalar_shift(FunctionLowering& lowering, const Instruction& instruction) {
  if (!has_types(lowering, instruction, 3)) return;
  VideoLowering video(lowering, instruction);
  const auto& types = types_of(instruction);
  bool wrap = has_word(instruction, "wrap");
  if (wrap == has_word(instruction, "clamp")) {
    lowering.error(instruction.location, "'" + instruction.opcode + "' needs one of .clamp and .wrap");
    return;
  }
  video.scalar(types[0], types[1], ScalarType::u32, true, true, ScalarResult::shifted, [&](Value* a, Value* b) {
    auto& builder = video.builder();
    Value* amount = wrap ? builder.CreateAnd(b, 31) : builder.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b, builder.getInt64(32));
    if (!left) return builder.CreateAShr(a, amount);
    return builder.CreateSExt(builder.CreateTrunc(builder.CreateShl(a, amount), builder.getIntNTy(34)), builder.getInt64Ty());
  });
}

void lower_vset(FunctionLowering& lowering, const Instruction& instruction) {
  if (!has_types(lowering, instruction, 2)) return;
  VideoLowering video(lowering, instruction);
  const auto& types = types_of(instruction);
  // The secondary .min/.max compare signed when a source is (as the H200 does).
  ScalarType result_type = is_signed(types[0]) || is_signed(types[1]) ? ScalarType::s32 : ScalarType::u32;
  video.scalar(result_type, types[0], types[1], false, true, ScalarResult::exact, [&](Value* a, Value* b) { return video.compare(a, b); });
}

// vmad: (a * b) + c exactly, plus one with .po, then shifted right by 7 or 15 and saturated to
// 32 bits, signed when either source type is or a source is negated. -a or -b (not both)
// complements the product and -c complements c, each adding one (the ISA's pseudocode: two's
// complement negation); c's negation excludes the others, and .po all of them. As the ISA's
// pseudocode has it, a shifted unsigned result is a 64-bit unsigned value, so a negative one
// saturates to 2^32-1 (unshifted, to zero).
void lower_vmad(FunctionLowering& lowering, const Instruction& instruction) {
  if (!has_types(lowering, instruction, 3)) return;
  if (instruction.operands.size() != 4) {
    lowering.error(instruction.location, "'vmad' takes 4 operands");
    return;
  }
  VideoLowering video(lowering, instruction);
  const auto& types = types_of(instruction);
  bool negate_product = video.operand(1).minus != video.operand(2).minus;
  bool negate_c = video.operand(3).minus;
  bool plus_one = has_word(instruction, "po");
  bool negates_source = video.operand(1).minus || video.operand(2).minus;
  if ((plus_one && (negates_source || negate_c)) || (negates_source && negate_c)) {
    lowering.error(instruction.location, "'vmad' negates a and b, or c, and nothing with .po");
    return;
  }
  bool signed_result = is_signed(types[1]) || is_signed(types[2]) || negate_product || negate_c;
  uint32_t shift = has_word(instruction, "shr7") ? 7 : has_word(instruction, "shr15") ? 15 : 0;
  auto& builder = video.builder();
  Value* c = lowering.read(video.operand(3), ScalarType::u32);
  if (negate_c) c = builder.CreateNot(c);
  llvm::Type* i128 = builder.getInt128Ty();
  // The H200 extends c as signed whatever the types.
  Value* addend = builder.CreateSExt(c, i128);
  if (plus_one || negate_product || negate_c) addend = builder.CreateAdd(addend, llvm::ConstantInt::get(i128, 1));
  // The H200 takes a whole-word source as signed whatever its type, and a selected byte or
  // half-word as signed when either source type is.
  bool signed_sources = is_signed(types[1]) || is_signed(types[2]);
  auto source_type = [&](size_t index) {
    return signed_sources || video.operand(index).component.empty() ? ScalarType::s32 : ScalarType::u32;
  };
  video.scalar(types[0], source_type(1), source_type(2), false, false, ScalarResult::exact, [&](Value* a, Value* b) {
    Value* product = builder.CreateMul(builder.CreateSExt(a, i128), builder.CreateSExt(b, i128));
    if (negate_product) product = builder.CreateNot(product);
    Value* total = builder.CreateAdd(product, addend);
    total = builder.CreateAShr(total, shift);
    if (shift != 0 && !signed_result) total = builder.CreateZExt(builder.CreateTrunc(total, builder.getInt64Ty()), i128);
    if (instruction.qualifiers.saturate)
      total = signed_result ? video.clamp(total, INT32_MIN, INT32_MAX) : video.clamp(total, 0, UINT32_MAX);
    return builder.CreateTrunc(total, builder.getInt64Ty());
  });
}

template <uint32_t lanes, VideoOperation operation>
void lower_simd(FunctionLowering& lowering, const Instruction& instruction) {
  if (!has_types(lowering, instruction, 3)) return;
  VideoLowering video(lowering, instruction);
  const auto& types = types_of(instruction);
  video.simd(lanes, types[0], types[1], types[2], true, [&](Value* a, Value* b) { return apply(video, operation, a, b); });
}

template <uint32_t lanes>
void lower_simd_set(FunctionLowering& lowering, const Instruction& instruction) {
  if (!has_types(lowering, instruction, 2)) return;
  VideoLowering video(lowering, instruction);
  const auto& types = types_of(instruction);
  video.simd(lanes, ScalarType::u32, types[0], types[1], false, [&](Value* a, Value* b) { return video.compare(a, b); });
}

}  // namespace

void add_video_lowerings(LoweringTable& table) {
  using enum VideoOperation;
  table["vadd"] = lower_scalar<add>;
  table["vsub"] = lower_scalar<subtract>;
  table["vabsdiff"] = lower_scalar<absolute_difference>;
  table["vmin"] = lower_scalar<minimum>;
  table["vmax"] = lower_scalar<maximum>;
  table["vshl"] = lower_scalar_shift<true>;
  table["vshr"] = lower_scalar_shift<false>;
  table["vmad"] = lower_vmad;
  table["vset"] = lower_vset;
  table["vadd2"] = lower_simd<2, add>;
  table["vsub2"] = lower_simd<2, subtract>;
  table["vavrg2"] = lower_simd<2, average>;
  table["vabsdiff2"] = lower_simd<2, absolute_difference>;
  table["vmin2"] = lower_simd<2, minimum>;
  table["vmax2"] = lower_simd<2, maximum>;
  table["vset2"] = lower_simd_set<2>;
  table["vadd4"] = lower_simd<4, add>;
  table["vsub4"] = lower_simd<4, subtract>;
  table["vavrg4"] = lower_simd<4, average>;
  table["vabsdiff4"] = lower_simd<4, absolute_difference>;
  table["vmin4"] = lower_simd<4, minimum>;
  table["vmax4"] = lower_simd<4, maximum>;
  table["vset4"] = lower_simd_set<4>;
}

}  // namespace xcuda::ptx
