#include "lower/tensor_core.h"

#include <algorithm>
#include <functional>

#include <llvm/IR/Intrinsics.h>

#include "lower/compiler_loops.h"
#include "lower/floating_point.h"
#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx::tensor_core {

using llvm::Value;

namespace {

constexpr std::pair<std::string_view, Element> element_names[] = {
    {"f16", Element::f16}, {"bf16", Element::bf16}, {"tf32", Element::tf32}, {"f64", Element::f64},
    {"s8", Element::s8},   {"u8", Element::u8},     {"s4", Element::s4},     {"u4", Element::u4},
    {"b1", Element::b1},   {"e4m3", Element::e4m3}, {"e5m2", Element::e5m2},
    {"f32", Element::f32}, {"s32", Element::s32},
};

std::string_view name_of(Element element) {
  for (const auto& [word, named] : element_names)
    if (named == element) return word;
  return "";
}

}  // namespace

std::optional<Element> element_named(std::string_view name) {
  for (const auto& [word, element] : element_names)
    if (word == name) return element;
  return std::nullopt;
}

llvm::AllocaInst* thread_array(llvm::IRBuilder<>& builder, llvm::Type* element, uint32_t count) {
  llvm::BasicBlock& entry = builder.GetInsertBlock()->getParent()->getEntryBlock();
  llvm::IRBuilder<> entry_builder(&entry, entry.begin());
  return entry_builder.CreateAlloca(llvm::ArrayType::get(element, count));
}

Value* array_element(llvm::IRBuilder<>& builder, llvm::AllocaInst* array, Value* index) {
  return builder.CreateGEP(array->getAllocatedType(), array, {builder.getInt32(0), index});
}

std::vector<Element> written_elements(const Instruction& instruction) {
  std::vector<Element> elements;
  for (const Modifier& modifier : instruction.modifiers)
    if (std::optional<Element> element = element_named(modifier.word)) elements.push_back(*element);
  return elements;
}

namespace {

// A word of the offer: whole registers of one fragment, `first` to first + registers.
struct Word {
  const Fragment& fragment;
  uint32_t index;  // of the fragment
  uint32_t first, registers;
  uint32_t register_bits() const { return fragment.registers[0]->getType()->getIntegerBitWidth(); }
};

std::vector<Word> words_of(std::span<const Fragment> fragments) {
  std::vector<Word> words;
  for (uint32_t index = 0; index < fragments.size(); ++index) {
    const Fragment& fragment = fragments[index];
    uint32_t per_word = 64 / fragment.registers[0]->getType()->getIntegerBitWidth();
    for (uint32_t first = 0; first < fragment.registers.size(); first += per_word)
      words.push_back({fragment, index, first, std::min(per_word, static_cast<uint32_t>(fragment.registers.size()) - first)});
  }
  return words;
}

}  // namespace

// One exchange for all the words, rather than one per word, spares the host target a cut of the
// kernel per word: an m16n8k16 .f16 mma.sync had three.
void offer_fragments(FunctionLowering& lowering, std::span<const Fragment> fragments) {
  auto& builder = lowering.builder();
  std::vector<Value*> offer;
  for (const Word& word : words_of(fragments)) {
    Value* packed = builder.getInt64(0);
    for (uint32_t slot = 0; slot < word.registers; ++slot) {
      Value* part = builder.CreateZExt(word.fragment.registers[word.first + slot], builder.getInt64Ty());
      packed = builder.CreateOr(packed, builder.CreateShl(part, slot * word.register_bits()));
    }
    offer.push_back(packed);
  }
  exchange_words(lowering, offer);
}

// Each lane places the elements of the warp's words as they come, in one loop over the lanes
// that reads where each element goes from a table per word: unrolled, placing a warp's m16n8k16
// fragments of A and B alone took 384 stores per copy of the code.
std::vector<llvm::AllocaInst*> place_fragments(FunctionLowering& lowering, std::span<const Fragment> fragments) {
  auto& builder = lowering.builder();
  std::vector<llvm::AllocaInst*> matrices;
  for (const Fragment& fragment : fragments)
    matrices.push_back(thread_array(builder, builder.getIntNTy(fragment.bits), fragment.rows * fragment.columns));
  std::vector<Word> words = words_of(fragments);
  // The place in its matrix of each element of each lane's word, lane by lane.
  std::vector<llvm::GlobalVariable*> places;
  for (const Word& word : words) {
    uint32_t per_register = word.register_bits() / word.fragment.bits;
    std::vector<uint16_t> place_of;
    for (uint32_t lane = 0; lane < warp_size; ++lane)
      for (uint32_t element = 0; element < word.registers * per_register; ++element) {
        Position position = word.fragment.layout(lane, word.first * per_register + element);
        place_of.push_back(static_cast<uint16_t>(position.row * word.fragment.columns + position.column));
      }
    llvm::Constant* contents = llvm::ConstantDataArray::get(lowering.context(), place_of);
    places.push_back(new llvm::GlobalVariable(lowering.module().target(), contents->getType(), true, llvm::GlobalValue::PrivateLinkage,
                                              contents, "xcuda.fragment_places"));
  }
  counted_loop(builder, builder.getInt32(warp_size), [&](Value* lane) {
    for (uint32_t index = 0; index < words.size(); ++index) {
      const Word& word = words[index];
      uint32_t per_register = word.register_bits() / word.fragment.bits;
      uint32_t per_lane = word.registers * per_register;
      Value* offered = peer_word(lowering, lane, index);
      for (uint32_t element = 0; element < per_lane; ++element) {
        Value* entry = builder.CreateAdd(builder.CreateMul(lane, builder.getInt32(per_lane)), builder.getInt32(element));
        Value* place = builder.CreateLoad(builder.getInt16Ty(), builder.CreateGEP(places[index]->getValueType(), places[index], {builder.getInt32(0), entry}));
        uint32_t shift = element / per_register * word.register_bits() + element % per_register * word.fragment.bits;
        builder.CreateStore(builder.CreateTrunc(builder.CreateLShr(offered, shift), builder.getIntNTy(word.fragment.bits)),
                            array_element(builder, matrices[word.index], builder.CreateZExt(place, builder.getInt32Ty())));
      }
    }
  });
  return matrices;
}

std::vector<llvm::AllocaInst*> gather(FunctionLowering& lowering, std::span<const Fragment> fragments) {
  offer_fragments(lowering, fragments);
  return place_fragments(lowering, fragments);
}

std::pair<Value*, Value*> first_position(FunctionLowering& lowering, Layout layout, Value* lane) {
  auto& builder = lowering.builder();
  std::vector<uint16_t> positions;
  for (uint32_t each = 0; each < warp_size; ++each) {
    Position position = layout(each, 0);
    positions.push_back(static_cast<uint16_t>(position.row << 8 | position.column));
  }
  llvm::Constant* contents = llvm::ConstantDataArray::get(lowering.context(), positions);
  auto* table = new llvm::GlobalVariable(lowering.module().target(), contents->getType(), true, llvm::GlobalValue::PrivateLinkage,
                                         contents, "xcuda.fragment_positions");
  Value* position = builder.CreateZExt(builder.CreateLoad(builder.getInt16Ty(), builder.CreateGEP(contents->getType(), table, {builder.getInt32(0), lane})),
                                       builder.getInt32Ty());
  return {builder.CreateLShr(position, 8), builder.CreateAnd(position, 0xFF)};
}

std::vector<Value*> read_registers(FunctionLowering& lowering, const Operand& operand, uint32_t bits) {
  ScalarType type = bits == 64 ? ScalarType::b64 : ScalarType::b32;
  std::vector<Value*> values;
  for (const Operand* element : elements_of(operand)) values.push_back(lowering.read(*element, type));
  return values;
}

namespace {

// A floating-point input of a tensor-core product, exactly, and its exponent as the hardware
// aligns on it: the exponent field's, with subnormals at the lowest normal exponent, but for
// FP8 inputs, whose subnormals count by their leading bit (an e5m2 x e4m3 conformance case with
// subnormal e4m3 and the 550,000 FP8 probe results agree only so).
struct Term {
  Value* value;     // double
  Value* exponent;  // i32
};

Term decode(llvm::IRBuilder<>& builder, Value* bits, Element element) {
  Value* value = nullptr;
  uint32_t fraction_bits = 23, bias = 127, field_mask = 0xFF;
  switch (element) {
    case Element::f16:
      value = builder.CreateBitCast(builder.CreateTrunc(bits, builder.getInt16Ty()), builder.getHalfTy());
      fraction_bits = 10, bias = 15, field_mask = 0x1F;
      break;
    case Element::bf16:
      bits = builder.CreateShl(builder.CreateZExt(bits, builder.getInt32Ty()), 16);
      value = builder.CreateBitCast(bits, builder.getFloatTy());
      break;
    case Element::tf32:
      // The hardware reads the 19 high bits of a .tf32 register.
      bits = builder.CreateAnd(bits, 0xFFFFE000u);
      value = builder.CreateBitCast(bits, builder.getFloatTy());
      break;
    case Element::e4m3:
      value = widen_from_narrow(builder, bits, e4m3_format);
      break;
    case Element::e5m2:
      value = widen_from_narrow(builder, bits, e5m2_format);
      break;
    default:
      value = builder.CreateBitCast(bits, builder.getFloatTy());
      break;
  }
  Value* wide = builder.CreateFPExt(value, builder.getDoubleTy());
  if (is_eight_bit_float(element)) {
    // Every FP8 value is normal as a double, whose exponent field then gives the leading bit's.
    Value* double_field = builder.CreateAnd(builder.CreateLShr(builder.CreateBitCast(wide, builder.getInt64Ty()), 52), 0x7FF);
    return {wide, builder.CreateSub(builder.CreateTrunc(double_field, builder.getInt32Ty()), builder.getInt32(1023))};
  }
  Value* field = builder.CreateAnd(builder.CreateLShr(builder.CreateZExt(bits, builder.getInt32Ty()), fraction_bits), field_mask);
  Value* exponent = builder.CreateSub(builder.CreateBinaryIntrinsic(llvm::Intrinsic::umax, field, builder.getInt32(1)),
                                      builder.getInt32(bias));
  return {wide, exponent};
}

// 2^exponent as a double, for exponents within the double's normal range.
Value* power_of_two(llvm::IRBuilder<>& builder, Value* exponent) {
  Value* field = builder.CreateZExt(builder.CreateAdd(exponent, builder.getInt32(1023)), builder.getInt64Ty());
  return builder.CreateBitCast(builder.CreateShl(field, 52), builder.getDoubleTy());
}

// Bits a tensor core keeps below the largest exponent among a dot product's terms; fitted to
// 143,360 mma.sync results per shape recorded on an H200, with which the model below agrees bit
// for bit for .f16, .bf16 and .tf32 with .f32 accumulators (tests/cuda/mma_numerics.cu).
constexpr int32_t alignment_bits = 25;
// wgmma's FP8 sums keep far fewer (tensor_core_dot says how they were found).
constexpr int32_t warpgroup_eight_bit_alignment_bits = 13;
// The significant bits of the sum that wgmma's FP8 sums into .f32 keep.
constexpr int warpgroup_eight_bit_significant_bits = 14;
constexpr int32_t no_exponent = -100000;
// The most terms one sum of the model takes: mma.sync's m16n8k32 with FP8 inputs.
constexpr uint32_t max_terms = 32;

// `exact` truncated toward zero to its `bits` leading significant bits (a normal double or zero).
Value* keep_leading_bits(llvm::IRBuilder<>& builder, Value* exact, int bits) {
  uint64_t dropped = (uint64_t{1} << (53 - bits)) - 1;
  Value* kept = builder.CreateAnd(builder.CreateBitCast(exact, builder.getInt64Ty()), ~dropped);
  return builder.CreateBitCast(kept, builder.getDoubleTy());
}

// `exact` truncated toward zero to .f32, as bits; a magnitude beyond .f32's range becomes
// infinite.
Value* truncate_to_single(llvm::IRBuilder<>& builder, Value* exact) {
  // Round to nearest, then step back toward zero where that rounded away.
  Value* nearest = builder.CreateFPTrunc(exact, builder.getFloatTy());
  Value* nearest_bits = builder.CreateBitCast(nearest, builder.getInt32Ty());
  Value* magnitude = builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, exact);
  Value* away = builder.CreateFCmpOGT(builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, builder.CreateFPExt(nearest, builder.getDoubleTy())), magnitude);
  Value* truncated = builder.CreateSelect(away, builder.CreateSub(nearest_bits, builder.getInt32(1)), nearest_bits);
  Value* infinity = builder.CreateOr(builder.CreateAnd(truncated, 0x80000000u), 0x7F800000u);
  return builder.CreateSelect(builder.CreateFCmpOGE(magnitude, llvm::ConstantFP::get(builder.getDoubleTy(), 0x1p128)), infinity, truncated);
}

// A scalar the loops below carry from one term to the next, in a slot that SROA turns back into
// a value.
struct Carried {
  llvm::AllocaInst* slot;
  Carried(llvm::IRBuilder<>& builder, Value* initial) : slot(thread_array(builder, initial->getType(), 1)) {
    builder.CreateStore(initial, slot);
  }
  Value* get(llvm::IRBuilder<>& builder) const { return builder.CreateLoad(slot->getAllocatedType()->getArrayElementType(), slot); }
  void set(llvm::IRBuilder<>& builder, Value* value) const { builder.CreateStore(value, slot); }
};

// A dot product's products, each exact as a double.
struct Products {
  llvm::AllocaInst* values;
  Value* count;  // i32
};

// The i32 exponent a term weighs with in an aligned sum: its own, or no_exponent for zero.
Value* weighed_exponent(llvm::IRBuilder<>& builder, Value* value, Value* exponent) {
  return builder.CreateSelect(builder.CreateFCmpOEQ(value, llvm::ConstantFP::get(builder.getDoubleTy(), 0.0)),
                              builder.getInt32(no_exponent), exponent);
}

// The terms' sum as a tensor core forms it: every term truncated toward zero to a multiple of
// 2^(E - kept_bits), where E is the largest exponent among the nonzero terms, and the truncated
// terms added exactly (each is an integer below 2^27 once scaled, so their order does not
// matter). The terms are `extra` and the products for which `included(index)` (an i1; all of
// them without it), whose largest weighed exponent is `largest`.
Value* aligned_sum(llvm::IRBuilder<>& builder, const Products& products, const std::function<Value*(Value*)>& included,
                   Value* largest, std::span<const Term> extra, int32_t kept_bits) {
  for (const Term& term : extra)
    largest = builder.CreateBinaryIntrinsic(llvm::Intrinsic::smax, largest, weighed_exponent(builder, term.value, term.exponent));
  largest = builder.CreateSelect(builder.CreateICmpEQ(largest, builder.getInt32(no_exponent)), builder.getInt32(0), largest);
  Value* scale = power_of_two(builder, builder.CreateSub(builder.getInt32(kept_bits), largest));
  auto truncated = [&](Value* value) { return builder.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, builder.CreateFMul(value, scale)); };
  Value* extra_sum = llvm::ConstantFP::get(builder.getDoubleTy(), 0.0);
  for (const Term& term : extra) extra_sum = builder.CreateFAdd(extra_sum, truncated(term.value));
  Carried sum(builder, extra_sum);
  counted_loop(builder, products.count, [&](Value* index) {
    Value* so_far = sum.get(builder);
    Value* added = builder.CreateFAdd(so_far, truncated(builder.CreateLoad(builder.getDoubleTy(), array_element(builder, products.values, index))));
    sum.set(builder, included ? builder.CreateSelect(included(index), added, so_far) : added);
  });
  return builder.CreateFMul(sum.get(builder), power_of_two(builder, builder.CreateSub(largest, builder.getInt32(kept_bits))));
}

}  // namespace

// D = C + Σ A·B for one element as Hopper's tensor cores compute it; fitted to the H200
// recordings of tests/conformance (matrix/mma_*) and to targeted FP8 probes of single, cancelling
// and tiny products at every k. With .f16/.bf16/.tf32 inputs C is one of the terms of one
// aligned sum (see aligned_sum), truncated toward zero to an .f32 accumulator but rounded to
// nearest for an .f16 one. FP8 inputs take two passes: the products of k mod 4 = 0, 1 form an
// aligned sum, which joins the products of k mod 4 = 2, 3 as a term of a second aligned sum; C
// is added last, rounding to nearest. An .f32 accumulator truncates each pass toward zero to
// .f32; an .f16 one rounds each to nearest .f16 (overflowing to infinity). This matches all
// 184,878 .f16 and 365,520 of the 365,522 .f32 probe results (tests/device/fp8_mma_probe.cu).
// wgmma sums FP8 products otherwise: in one aligned sum of all k products and C, keeping 13 bits
// below the largest exponent; into .f32 the sum then keeps its 14 leading bits (truncated toward
// zero), into .f16 it rounds to nearest. Fitted to the H200's recordings of tests/cuda/
// warpgroup_mma.cu (4,096 .f32 and 4,096 .f16 results of random m64n64k32 .e4m3 products and C,
// which the mma.sync model missed by a few bits in most results), it then matched all 8,192 of
// its .e5m2 cases and all 240,480 results of targeted probes of every FP8 type pair into either
// accumulator (tests/cuda/warpgroup_fp8_sums.cu, which checks them all).
// A result that comes to zero is +0 unless every term was zero (then IEEE's signed zero); NaNs
// and infinities among the inputs give what IEEE addition of the exact products would, with NaN
// as the canonical 0x7FFFFFFF (0x7FFF).
// The sums run as loops over the terms, whatever k: unrolled, an m16n8k16 element's function was
// 460 instructions after optimisation (97 as loops), and the FP8 m16n8k32 conformance case
// compiled in 139 ms rather than 100; the loops run as fast (an m16n8k16 .f16 mma.sync 200 times
// in a loop by 2048 threads: 75 and 74 ms).
Value* tensor_core_dot(llvm::IRBuilder<>& builder, const DotTerms& terms, Value* k, Value* c, Element a_type, Element b_type,
                       Element accumulator, Adder adder) {
  bool warpgroup_eight_bit = is_eight_bit_float(a_type) && adder == Adder::warpgroup;
  bool separate_accumulator = is_eight_bit_float(a_type) && !warpgroup_eight_bit;
  int32_t bits = warpgroup_eight_bit ? warpgroup_eight_bit_alignment_bits : alignment_bits;
  Term accumulated = decode(builder, c, accumulator);
  Value* zero = llvm::ConstantFP::get(builder.getDoubleTy(), 0.0);
  // What IEEE addition of the exact products, in order, gives, whether every term is zero, and
  // the largest weighed exponent among the products of each pass (FP8 has two).
  Carried naive(builder, builder.CreateFAdd(llvm::ConstantFP::getNegativeZero(builder.getDoubleTy()), accumulated.value));
  Carried all_zero(builder, builder.CreateFCmpOEQ(accumulated.value, zero));
  Carried first_largest(builder, builder.getInt32(no_exponent)), second_largest(builder, builder.getInt32(no_exponent));
  auto in_second_pass = [&](Value* index) {
    return separate_accumulator ? builder.CreateICmpNE(builder.CreateAnd(index, 2), builder.getInt32(0)) : builder.getFalse();
  };
  auto* constant_k = llvm::dyn_cast<llvm::ConstantInt>(k);
  Products products{thread_array(builder, builder.getDoubleTy(), constant_k ? constant_k->getZExtValue() : max_terms), k};
  counted_loop(builder, k, [&](Value* index) {
    auto input = [&](Value* array, Value* element_index, Element element) {
      llvm::Type* type = builder.getIntNTy(element_bits(element));
      return decode(builder, builder.CreateLoad(type, builder.CreateGEP(type, array, element_index)), element);
    };
    Term left = input(terms.a, index, a_type);
    Term right = input(terms.b, builder.CreateMul(index, builder.getInt32(terms.b_stride)), b_type);
    Value* product = builder.CreateFMul(left.value, right.value);
    Value* exponent = weighed_exponent(builder, product, builder.CreateAdd(left.exponent, right.exponent));
    builder.CreateStore(product, array_element(builder, products.values, index));
    naive.set(builder, builder.CreateFAdd(naive.get(builder), product));
    all_zero.set(builder, builder.CreateAnd(all_zero.get(builder), builder.CreateFCmpOEQ(product, zero)));
    auto count = [&](const Carried& largest, Value* counted) {
      Value* so_far = largest.get(builder);
      largest.set(builder, builder.CreateSelect(counted, builder.CreateBinaryIntrinsic(llvm::Intrinsic::smax, so_far, exponent), so_far));
    };
    Value* second = in_second_pass(index);
    count(first_largest, builder.CreateNot(second));
    if (separate_accumulator) count(second_largest, second);
  });
  bool single = accumulator == Element::f32;
  llvm::Type* format = single ? builder.getFloatTy() : builder.getHalfTy();
  llvm::IntegerType* bits_type = builder.getIntNTy(single ? 32 : 16);
  uint64_t magnitude_mask = single ? 0x7FFFFFFFu : 0x7FFFu;
  // An FP8 pass's sum as the accumulator's format holds it, as bits.
  auto pass_result = [&](Value* sum) {
    return single ? truncate_to_single(builder, sum) : builder.CreateBitCast(builder.CreateFPTrunc(sum, format), bits_type);
  };
  Value* result = nullptr;
  if (separate_accumulator) {
    auto in_first_pass = [&](Value* index) { return builder.CreateNot(in_second_pass(index)); };
    Value* first = aligned_sum(builder, products, in_first_pass, first_largest.get(builder), {}, bits);
    Term carried = decode(builder, pass_result(first), accumulator);
    Value* second = aligned_sum(builder, products, in_second_pass, second_largest.get(builder), std::span(&carried, 1), bits);
    Value* products_sum = builder.CreateBitCast(pass_result(second), format);
    // Two .f16 values add exactly in a double, so either sum is rounded once, to the format.
    Value* total = single ? builder.CreateFAdd(builder.CreateFPTrunc(accumulated.value, format), products_sum)
                          : builder.CreateFPTrunc(builder.CreateFAdd(builder.CreateFPExt(products_sum, builder.getDoubleTy()), accumulated.value), format);
    result = builder.CreateBitCast(total, bits_type);
  } else {
    Value* exact = aligned_sum(builder, products, nullptr, first_largest.get(builder), std::span(&accumulated, 1), bits);
    if (warpgroup_eight_bit && single) exact = keep_leading_bits(builder, exact, warpgroup_eight_bit_significant_bits);
    result = single ? truncate_to_single(builder, exact) : builder.CreateBitCast(builder.CreateFPTrunc(exact, format), bits_type);
  }
  Value* naive_sum = naive.get(builder);
  Value* is_zero = builder.CreateICmpEQ(builder.CreateAnd(result, magnitude_mask), llvm::ConstantInt::get(bits_type, 0));
  Value* naive_bits = builder.CreateBitCast(builder.CreateFPTrunc(naive_sum, format), bits_type);
  result = builder.CreateSelect(is_zero, builder.CreateSelect(all_zero.get(builder), naive_bits, llvm::ConstantInt::get(bits_type, 0)), result);
  Value* is_nan = builder.CreateFCmpUNO(naive_sum, naive_sum);
  Value* is_infinite = builder.CreateFCmpOEQ(builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, naive_sum),
                                             llvm::ConstantFP::getInfinity(builder.getDoubleTy()));
  result = builder.CreateSelect(is_infinite, naive_bits, result);
  return builder.CreateSelect(is_nan, llvm::ConstantInt::get(bits_type, magnitude_mask), result);
}

Value* quad_pair_dot(FunctionLowering& lowering, const DotTerms& terms, Value* c, Element c_type, Element d_type) {
  auto& builder = lowering.builder();
  llvm::Type* single = builder.getFloatTy();
  auto widened = [&](Value* bits) { return builder.CreateFPExt(builder.CreateBitCast(bits, builder.getHalfTy()), single); };
  std::vector<Value*> products;
  for (uint32_t index = 0; index < 4; ++index) {
    Value* a = builder.CreateLoad(builder.getInt16Ty(), builder.CreateGEP(builder.getInt16Ty(), terms.a, builder.getInt32(index)));
    Value* b = builder.CreateLoad(builder.getInt16Ty(), builder.CreateGEP(builder.getInt16Ty(), terms.b, builder.getInt32(index * terms.b_stride)));
    // Exact: two .f16 significands make at most 22 bits.
    products.push_back(builder.CreateFMul(widened(a), widened(b)));
  }
  Value* accumulated = c_type == Element::f16 ? widened(c) : builder.CreateBitCast(c, single);
  Value* first_pair = builder.CreateFAdd(products[0], products[1]);
  if (d_type == Element::f32) {
    Value* sum = builder.CreateFAdd(accumulated, builder.CreateFAdd(builder.CreateFAdd(first_pair, products[2]), products[3]));
    return builder.CreateSelect(builder.CreateFCmpUNO(sum, sum), builder.getInt32(0x7FFFFFFF), builder.CreateBitCast(sum, builder.getInt32Ty()));
  }
  Value* sum = builder.CreateFAdd(builder.CreateFAdd(accumulated, first_pair), builder.CreateFAdd(products[2], products[3]));
  return round_to_narrow(lowering, sum, f16_format, NarrowRounding{});
}

namespace {

// .f64: a chain of IEEE fused multiply-adds in k order, starting from C, as the H200 recordings
// of tests/conformance show. A NaN result is the first NaN among B's element, the running sum
// and A's element, quieted; an invalid operation (∞·0, ∞ - ∞) gives 0xFFF8000000000000.
Value* double_dot(llvm::IRBuilder<>& builder, std::span<Value* const> a, std::span<Value* const> b, Value* c) {
  llvm::Type* double_type = builder.getDoubleTy();
  Value* sum = builder.CreateBitCast(c, double_type);
  for (size_t index = 0; index < a.size(); ++index) {
    Value* left = builder.CreateBitCast(a[index], double_type);
    Value* right = builder.CreateBitCast(b[index], double_type);
    Value* propagated = builder.getInt64(0xFFF8000000000000u);
    for (Value* operand : {left, sum, right}) {
      Value* quieted = builder.CreateOr(builder.CreateBitCast(operand, builder.getInt64Ty()), 0x0008000000000000u);
      propagated = builder.CreateSelect(builder.CreateFCmpUNO(operand, operand), quieted, propagated);
    }
    Value* fused = builder.CreateIntrinsic(llvm::Intrinsic::fma, {double_type}, {left, right, sum});
    sum = builder.CreateSelect(builder.CreateFCmpUNO(fused, fused), builder.CreateBitCast(propagated, double_type), fused);
  }
  return builder.CreateBitCast(sum, builder.getInt64Ty());
}

}  // namespace

// .s8/.u8 and .s4/.u4 with .s32 accumulators: exact, wrapping modulo 2^32 or, with .satfinite, clamped.
Value* integer_dot(llvm::IRBuilder<>& builder, std::span<Value* const> a, std::span<Value* const> b, Value* c,
                   bool a_signed, bool b_signed, bool saturate) {
  Value* sum = builder.CreateSExt(c, builder.getInt64Ty());
  for (size_t index = 0; index < a.size(); ++index) {
    Value* left = a_signed ? builder.CreateSExt(a[index], builder.getInt64Ty()) : builder.CreateZExt(a[index], builder.getInt64Ty());
    Value* right = b_signed ? builder.CreateSExt(b[index], builder.getInt64Ty()) : builder.CreateZExt(b[index], builder.getInt64Ty());
    sum = builder.CreateAdd(sum, builder.CreateMul(left, right));
  }
  if (saturate) {
    sum = builder.CreateBinaryIntrinsic(llvm::Intrinsic::smax, sum, builder.getInt64(INT32_MIN));
    sum = builder.CreateBinaryIntrinsic(llvm::Intrinsic::smin, sum, builder.getInt64(INT32_MAX));
  }
  return builder.CreateTrunc(sum, builder.getInt32Ty());
}

namespace {

// Whether a form's sum is the tensor cores' floating-point one (tensor_core_dot), not .f64's
// chain of fused multiply-adds or an exact integer or bit count.
bool is_tensor_core_float(Element element) { return element != Element::f64 && !is_integer(element) && element != Element::b1; }

// .b1: C plus the count of the k positions where A's bit and B's bit (exclusive_bits: differ)
// are set, wrapping modulo 2^32 as the .s32 accumulator does.
Value* bit_dot(llvm::IRBuilder<>& builder, std::span<Value* const> a, std::span<Value* const> b, Value* c, bool exclusive_bits) {
  Value* sum = c;
  for (size_t index = 0; index < a.size(); ++index) {
    Value* bit = exclusive_bits ? builder.CreateXor(a[index], b[index]) : builder.CreateAnd(a[index], b[index]);
    sum = builder.CreateAdd(sum, builder.CreateZExt(bit, builder.getInt32Ty()));
  }
  return sum;
}

// A sum of all k terms at once takes k as an argument, so that the shapes of one type share a
// function (mma.sync's m16n8k8 and m16n8k16, say): each function took about 4 ms of CPU to
// optimise and compile, and tests/cuda/mma_numerics.cu's module, with three types in two
// shapes each, compiled in 111-119 ms instead of 121-131 (`perf stat -r 5 xcuda compile
// --target host -j 1 --whole-warp-blocks`, three alternations), at the same speed (m16n8k16
// .f16 and m16n8k4 .tf32 mma.sync loops). The other forms are written out for their k.
bool sums_any_k(const DotForm& form) { return form.step == form.k && is_tensor_core_float(form.a_type); }

void define_dot(llvm::Function& dot, const DotForm& form) {
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(dot.getContext(), "entry", &dot));
  llvm::Type* element = builder.getIntNTy(element_bits(form.a_type));
  Value* sum = dot.getArg(2);
  if (!is_tensor_core_float(form.a_type)) {
    std::vector<Value*> a, b;
    for (uint32_t term = 0; term < form.k; ++term) {
      a.push_back(builder.CreateLoad(element, builder.CreateConstGEP1_32(element, dot.getArg(0), term)));
      b.push_back(builder.CreateLoad(element, builder.CreateConstGEP1_32(element, dot.getArg(1), term * form.b_stride)));
    }
    if (form.a_type == Element::f64) sum = double_dot(builder, a, b, sum);
    else if (form.a_type == Element::b1) sum = bit_dot(builder, a, b, sum, form.exclusive_bits);
    else sum = integer_dot(builder, a, b, sum, is_signed(form.a_type), is_signed(form.b_type), form.saturate);
  } else if (sums_any_k(form)) {
    sum = tensor_core_dot(builder, DotTerms{dot.getArg(0), dot.getArg(1), form.b_stride}, dot.getArg(3), sum, form.a_type,
                          form.b_type, form.accumulator, Adder::mma_sync);
  } else {
    for (uint32_t first = 0; first < form.k; first += form.step) {
      DotTerms terms{builder.CreateConstGEP1_32(element, dot.getArg(0), first),
                     builder.CreateConstGEP1_32(element, dot.getArg(1), first * form.b_stride), form.b_stride};
      sum = tensor_core_dot(builder, terms, builder.getInt32(form.step), sum, form.a_type, form.b_type, form.accumulator, Adder::mma_sync);
    }
  }
  builder.CreateRet(sum);
}

}  // namespace

std::string dot_function_name(const DotForm& form, unsigned address_space) {
  std::string name = "xcuda.tensor_core.dot." + std::string(name_of(form.a_type)) + "." + std::string(name_of(form.b_type)) + "." +
                     std::string(name_of(form.accumulator)) +
                     (sums_any_k(form) ? "" : ".k" + std::to_string(form.k) + ".by" + std::to_string(form.step)) + ".stride" +
                     std::to_string(form.b_stride) + (form.saturate ? ".satfinite" : "") +
                     (form.a_type == Element::b1 ? (form.exclusive_bits ? ".xor" : ".and") : "");
  for (int operand = 0; operand < 2; ++operand) name += ".p" + std::to_string(address_space);
  return name;
}

llvm::Function* dot_function(llvm::Module& module, const DotForm& form, unsigned address_space) {
  std::string name = dot_function_name(form, address_space);
  if (llvm::Function* dot = module.getFunction(name)) return dot;
  llvm::LLVMContext& context = module.getContext();
  auto* pointer = llvm::PointerType::get(context, address_space);
  auto* accumulator = llvm::IntegerType::get(context, element_bits(form.accumulator));
  auto* type = llvm::FunctionType::get(accumulator, {pointer, pointer, accumulator, llvm::Type::getInt32Ty(context)}, false);
  auto* dot = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, name, module);
  dot->addFnAttr(llvm::Attribute::NoInline);
  dot->setDoesNotThrow();
  dot->setWillReturn();
  dot->setNoSync();
  dot->setMemoryEffects(llvm::MemoryEffects::argMemOnly(llvm::ModRefInfo::Ref));
  for (unsigned operand : {0u, 1u}) {
    dot->addParamAttr(operand, llvm::Attribute::NoCapture);
    dot->addParamAttr(operand, llvm::Attribute::ReadOnly);
  }
  define_dot(*dot, form);
  return dot;
}

Value* call_dot(FunctionLowering& lowering, const DotForm& form, Value* a_row, Value* b_column, Value* c) {
  // The per-thread matrices lie in the target's address space for them.
  llvm::Function* dot = dot_function(lowering.module().target(), form, a_row->getType()->getPointerAddressSpace());
  return lowering.builder().CreateCall(dot, {a_row, b_column, c, lowering.builder().getInt32(form.k)});
}

}  // namespace xcuda::ptx::tensor_core
