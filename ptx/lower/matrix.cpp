// Warp-level matrix instructions: mma.sync, wmma, ldmatrix and stmatrix. Each lane holds
// fragments of the matrices in the places the PTX ISA's fragment layout tables give, and what a
// lane gets depends on other lanes' registers. So every lane offers its fragment registers at
// warp exchanges (see intrinsics.h), copies the whole warp's fragments into per-thread matrices
// laid out row by row, and then computes or picks its own elements from them.
#include <array>
#include <optional>
#include <span>

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/IR/Intrinsics.h>

#include "lower/floating_point.h"
#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {
namespace {

using llvm::Value;

constexpr uint32_t warp_size = 32;

struct Position {
  uint32_t row, column;
};
// Where element `index` of a lane's fragment sits in its matrix; the ISA numbers a lane's
// elements across its registers, lowest bits first.
using Layout = Position (*)(uint32_t lane, uint32_t index);
using AnyLayout = llvm::function_ref<Position(uint32_t lane, uint32_t index)>;

uint32_t group_of(uint32_t lane) { return lane >> 2; }
uint32_t thread_in_group(uint32_t lane) { return lane & 3; }

// m16n8k8 and m16n8k16 .f16/.bf16 A: pairs along a row, rows g and g+8, then columns +8.
Position a_16bit(uint32_t lane, uint32_t index) {
  return {group_of(lane) + 8 * ((index >> 1) & 1), 2 * thread_in_group(lane) + (index & 1) + 8 * (index >> 2)};
}
Position b_16bit(uint32_t lane, uint32_t index) {
  return {2 * thread_in_group(lane) + (index & 1) + 8 * (index >> 1), group_of(lane)};
}
// .tf32 and the m16n8 .f64 shapes: one element per register, rows g and g+8, then columns +4.
Position a_32bit(uint32_t lane, uint32_t index) {
  return {group_of(lane) + 8 * (index & 1), thread_in_group(lane) + 4 * (index >> 1)};
}
Position b_32bit(uint32_t lane, uint32_t index) { return {thread_in_group(lane) + 4 * index, group_of(lane)}; }
// .s8/.u8: four along a row, rows g and g+8, then columns +16.
Position a_8bit(uint32_t lane, uint32_t index) {
  return {group_of(lane) + 8 * ((index >> 2) & 1), 4 * thread_in_group(lane) + (index & 3) + 16 * (index >> 3)};
}
Position b_8bit(uint32_t lane, uint32_t index) {
  return {4 * thread_in_group(lane) + (index & 3) + 16 * (index >> 2), group_of(lane)};
}
// m8n8k4 .f64 and m8n8k16 .s8/.u8.
Position a_m8n8(uint32_t lane, uint32_t index) { return {group_of(lane), 4 * thread_in_group(lane) + index}; }
Position b_m8n8(uint32_t lane, uint32_t index) { return {4 * thread_in_group(lane) + index, group_of(lane)}; }
Position a_m8n8k4_f64(uint32_t lane, uint32_t) { return {group_of(lane), thread_in_group(lane)}; }
Position b_m8n8k4_f64(uint32_t lane, uint32_t) { return {thread_in_group(lane), group_of(lane)}; }

enum class Element { f16, bf16, tf32, f64, s8, u8, e4m3, e5m2, f32, s32 };

bool is_byte(Element element) { return element == Element::s8 || element == Element::u8; }
bool is_eight_bit_float(Element element) { return element == Element::e4m3 || element == Element::e5m2; }

uint32_t element_bits(Element element) {
  switch (element) {
    case Element::f16: case Element::bf16: return 16;
    case Element::s8: case Element::u8: case Element::e4m3: case Element::e5m2: return 8;
    case Element::f64: return 64;
    default: return 32;
  }
}

struct Fragment {
  Layout layout;
  uint32_t elements;  // per lane
};

// The accumulators of every shape lie in pairs along a row: rows g and g+8 (m16n8) or g alone
// (m8n8, two elements), so each lane's C is its D and needs no exchange.
struct MmaForm {
  uint32_t m, n, k;
  Element input, accumulator;
  Fragment a, b;
  uint32_t accumulators;  // per lane
};

// The shapes and types of mma.sync the ISA defines for sm_80 and sm_90 (FP8 from sm_89), but
// m8n8k4 .f16 (whose quad-pair layout predates them) and the sub-byte types. FP8 fragments lie
// as .s8/.u8 ones do.
std::optional<MmaForm> find_form(std::string_view shape, Element input, Element accumulator) {
  bool half = input == Element::f16 || input == Element::bf16;
  bool byte = is_byte(input) || is_eight_bit_float(input);
  bool float_accumulator = accumulator == Element::f32 ||
                           (accumulator == Element::f16 && (input == Element::f16 || is_eight_bit_float(input)));
  if (half && float_accumulator && (shape == "m16n8k8" || shape == "m16n8k16")) {
    uint32_t k = shape == "m16n8k8" ? 8 : 16;
    return MmaForm{16, 8, k, input, accumulator, {a_16bit, k / 2}, {b_16bit, k / 4}, 4};
  }
  if (input == Element::tf32 && accumulator == Element::f32 && (shape == "m16n8k4" || shape == "m16n8k8")) {
    uint32_t k = shape == "m16n8k4" ? 4 : 8;
    return MmaForm{16, 8, k, input, accumulator, {a_32bit, k / 2}, {b_32bit, k / 4}, 4};
  }
  if (input == Element::f64 && accumulator == Element::f64) {
    if (shape == "m8n8k4") return MmaForm{8, 8, 4, input, accumulator, {a_m8n8k4_f64, 1}, {b_m8n8k4_f64, 1}, 2};
    for (uint32_t k : {4u, 8u, 16u})
      if (shape == "m16n8k" + std::to_string(k))
        return MmaForm{16, 8, k, input, accumulator, {a_32bit, k / 2}, {b_32bit, k / 4}, 4};
  }
  if (byte && (is_byte(input) ? accumulator == Element::s32 : float_accumulator)) {
    if (shape == "m8n8k16" && is_byte(input)) return MmaForm{8, 8, 16, input, accumulator, {a_m8n8, 4}, {b_m8n8, 4}, 2};
    if (shape == "m16n8k16" || shape == "m16n8k32") {
      uint32_t k = shape == "m16n8k16" ? 16 : 32;
      return MmaForm{16, 8, k, input, accumulator, {a_8bit, k / 2}, {b_8bit, k / 4}, 4};
    }
  }
  return std::nullopt;
}

std::optional<Element> element_named(std::string_view name) {
  constexpr std::pair<std::string_view, Element> names[] = {
      {"f16", Element::f16}, {"bf16", Element::bf16}, {"tf32", Element::tf32}, {"f64", Element::f64},
      {"s8", Element::s8},   {"u8", Element::u8},     {"e4m3", Element::e4m3}, {"e5m2", Element::e5m2},
      {"f32", Element::f32}, {"s32", Element::s32},
  };
  for (const auto& [word, element] : names)
    if (word == name) return element;
  return std::nullopt;
}

// A per-thread array in the function's entry block, so that the host target keeps it in the
// thread's storage across the exchanges.
llvm::AllocaInst* thread_array(FunctionLowering& lowering, llvm::Type* element, uint32_t count) {
  llvm::BasicBlock& entry = lowering.builder().GetInsertBlock()->getParent()->getEntryBlock();
  llvm::IRBuilder<> builder(&entry, entry.begin());
  return builder.CreateAlloca(llvm::ArrayType::get(element, count));
}

Value* array_element(FunctionLowering& lowering, llvm::AllocaInst* array, Value* index) {
  auto& builder = lowering.builder();
  return builder.CreateGEP(array->getAllocatedType(), array, {builder.getInt32(0), index});
}

// The k elements of row `row` of A (m × k, row-major) and of column `column` of B (k × n,
// row-major) that one element of D is the dot product of.
struct DotOperands {
  std::vector<Value*> a, b;
};
DotOperands dot_operands(FunctionLowering& lowering, llvm::AllocaInst* a_matrix, llvm::AllocaInst* b_matrix, llvm::Type* type, Value* row,
                         Value* column, uint32_t k, uint32_t n) {
  auto& builder = lowering.builder();
  DotOperands operands;
  for (uint32_t step = 0; step < k; ++step) {
    Value* a_index = builder.CreateAdd(builder.CreateMul(row, builder.getInt32(k)), builder.getInt32(step));
    Value* b_index = builder.CreateAdd(builder.getInt32(step * n), column);
    operands.a.push_back(builder.CreateLoad(type, array_element(lowering, a_matrix, a_index)));
    operands.b.push_back(builder.CreateLoad(type, array_element(lowering, b_matrix, b_index)));
  }
  return operands;
}

// Copies every lane's fragment, the elements of `bits` bits packed in `registers`, into a
// rows × columns matrix (row-major) at the places `layout` names.
llvm::AllocaInst* gather(FunctionLowering& lowering, const std::vector<Value*>& registers, uint32_t bits,
                         AnyLayout layout, uint32_t rows, uint32_t columns) {
  auto& builder = lowering.builder();
  llvm::Type* element_type = builder.getIntNTy(bits);
  llvm::AllocaInst* matrix = thread_array(lowering, element_type, rows * columns);
  uint32_t register_bits = registers[0]->getType()->getIntegerBitWidth();
  uint32_t per_register = register_bits / bits;
  uint32_t per_offer = 64 / register_bits;
  for (size_t first = 0; first < registers.size(); first += per_offer) {
    Value* offer = builder.getInt64(0);
    for (uint32_t slot = 0; slot < per_offer && first + slot < registers.size(); ++slot) {
      Value* word = builder.CreateZExt(registers[first + slot], builder.getInt64Ty());
      offer = builder.CreateOr(offer, builder.CreateShl(word, slot * register_bits));
    }
    exchange(lowering, offer, builder.getInt32(~0u));
    for (uint32_t lane = 0; lane < warp_size; ++lane) {
      Value* offered = peer(lowering, builder.getInt32(lane));
      for (uint32_t slot = 0; slot < per_offer && first + slot < registers.size(); ++slot) {
        for (uint32_t part = 0; part < per_register; ++part) {
          uint32_t index = static_cast<uint32_t>(first + slot) * per_register + part;
          Position position = layout(lane, index);
          Value* element = builder.CreateTrunc(builder.CreateLShr(offered, slot * register_bits + part * bits), element_type);
          builder.CreateStore(element, array_element(lowering, matrix, builder.getInt32(position.row * columns + position.column)));
        }
      }
    }
  }
  return matrix;
}

// The operand's registers as integers of `bits` bits.
std::vector<Value*> read_registers(FunctionLowering& lowering, const Operand& operand, uint32_t bits) {
  ScalarType type = bits == 64 ? ScalarType::b64 : ScalarType::b32;
  std::vector<Value*> values;
  for (const Operand* element : elements_of(operand)) values.push_back(lowering.read(*element, type));
  return values;
}

// A floating-point input of a tensor-core product, exactly, and its exponent as the hardware
// aligns on it: the exponent field's, with subnormals at the lowest normal exponent, but for
// FP8 inputs, whose subnormals count by their leading bit (an e5m2 x e4m3 conformance case with
// subnormal e4m3 and the 550,000 FP8 probe results agree only so).
struct Term {
  Value* value;     // double
  Value* exponent;  // i32
};

Term decode(FunctionLowering& lowering, Value* bits, Element element) {
  auto& builder = lowering.builder();
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
      value = widen_from_narrow(lowering, bits, e4m3_format);
      break;
    case Element::e5m2:
      value = widen_from_narrow(lowering, bits, e5m2_format);
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
Value* power_of_two(FunctionLowering& lowering, Value* exponent) {
  auto& builder = lowering.builder();
  Value* field = builder.CreateZExt(builder.CreateAdd(exponent, builder.getInt32(1023)), builder.getInt64Ty());
  return builder.CreateBitCast(builder.CreateShl(field, 52), builder.getDoubleTy());
}

// Bits a tensor core keeps below the largest exponent among a dot product's terms; fitted to
// 143,360 mma.sync results per shape recorded on an H200, with which the model below agrees bit
// for bit for .f16, .bf16 and .tf32 with .f32 accumulators (tests/cuda/mma_numerics.cu).
constexpr int32_t alignment_bits = 25;
constexpr int32_t no_exponent = -100000;

// `exact` truncated toward zero to .f32, as bits; a magnitude beyond .f32's range becomes
// infinite.
Value* truncate_to_single(FunctionLowering& lowering, Value* exact) {
  auto& builder = lowering.builder();
  // Round to nearest, then step back toward zero where that rounded away.
  Value* nearest = builder.CreateFPTrunc(exact, builder.getFloatTy());
  Value* nearest_bits = builder.CreateBitCast(nearest, builder.getInt32Ty());
  Value* magnitude = builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, exact);
  Value* away = builder.CreateFCmpOGT(builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, builder.CreateFPExt(nearest, builder.getDoubleTy())), magnitude);
  Value* truncated = builder.CreateSelect(away, builder.CreateSub(nearest_bits, builder.getInt32(1)), nearest_bits);
  Value* infinity = builder.CreateOr(builder.CreateAnd(truncated, 0x80000000u), 0x7F800000u);
  return builder.CreateSelect(builder.CreateFCmpOGE(magnitude, llvm::ConstantFP::get(builder.getDoubleTy(), 0x1p128)), infinity, truncated);
}

// The terms' sum as a tensor core forms it: every term truncated toward zero to a multiple of
// 2^(E - 25), where E is the largest exponent among the nonzero terms (exponents as the fields give
// them, so a product's is the sum of its inputs'), and the truncated terms added exactly.
Value* aligned_sum(FunctionLowering& lowering, std::span<const Term> terms) {
  auto& builder = lowering.builder();
  Value* zero = llvm::ConstantFP::get(builder.getDoubleTy(), 0.0);
  Value* largest = builder.getInt32(no_exponent);
  for (const Term& term : terms) {
    Value* exponent = builder.CreateSelect(builder.CreateFCmpOEQ(term.value, zero), builder.getInt32(no_exponent), term.exponent);
    largest = builder.CreateBinaryIntrinsic(llvm::Intrinsic::smax, largest, exponent);
  }
  largest = builder.CreateSelect(builder.CreateICmpEQ(largest, builder.getInt32(no_exponent)), builder.getInt32(0), largest);
  Value* scale = power_of_two(lowering, builder.CreateSub(builder.getInt32(alignment_bits), largest));
  Value* sum = zero;
  for (const Term& term : terms)
    sum = builder.CreateFAdd(sum, builder.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, builder.CreateFMul(term.value, scale)));
  return builder.CreateFMul(sum, power_of_two(lowering, builder.CreateSub(largest, builder.getInt32(alignment_bits))));
}

// D = C + Σ A·B for one element as Hopper's tensor cores compute it; fitted to the H200
// recordings of tests/conformance (matrix/mma_*) and to targeted FP8 probes of single, cancelling
// and tiny products at every k. With .f16/.bf16/.tf32 inputs C is one of the terms of one
// aligned sum (see aligned_sum), truncated toward zero to an .f32 accumulator but rounded to
// nearest for an .f16 one. FP8 inputs take two passes: the products of k mod 4 = 0, 1 form an
// aligned sum, which joins the products of k mod 4 = 2, 3 as a term of a second aligned sum; C
// is added last, rounding to nearest. An .f32 accumulator truncates each pass toward zero to
// .f32; an .f16 one rounds each to nearest .f16 (overflowing to infinity). This matches all
// 184,878 .f16 and 365,520 of the 365,522 .f32 probe results (tests/device/fp8_mma_probe.cu).
// A result that comes to zero is +0 unless every term was zero (then IEEE's signed zero); NaNs
// and infinities among the inputs give what IEEE addition of the exact products would, with NaN
// as the canonical 0x7FFFFFFF (0x7FFF).
Value* tensor_core_dot(FunctionLowering& lowering, std::span<Value* const> a, std::span<Value* const> b, Value* c,
                       Element a_type, Element b_type, Element accumulator) {
  auto& builder = lowering.builder();
  bool separate_accumulator = is_eight_bit_float(a_type);
  Term accumulated = decode(lowering, c, accumulator);
  Value* zero = llvm::ConstantFP::get(builder.getDoubleTy(), 0.0);
  Value* naive = builder.CreateFAdd(llvm::ConstantFP::getNegativeZero(builder.getDoubleTy()), accumulated.value);
  Value* all_zero = builder.CreateFCmpOEQ(accumulated.value, zero);
  std::vector<Term> terms, second_pass;
  if (!separate_accumulator) terms.push_back(accumulated);
  for (size_t index = 0; index < a.size(); ++index) {
    Term left = decode(lowering, a[index], a_type), right = decode(lowering, b[index], b_type);
    Term product{builder.CreateFMul(left.value, right.value), builder.CreateAdd(left.exponent, right.exponent)};
    (separate_accumulator && index % 4 >= 2 ? second_pass : terms).push_back(product);
    naive = builder.CreateFAdd(naive, product.value);
    all_zero = builder.CreateAnd(all_zero, builder.CreateFCmpOEQ(product.value, zero));
  }
  bool single = accumulator == Element::f32;
  llvm::Type* format = single ? builder.getFloatTy() : builder.getHalfTy();
  llvm::IntegerType* bits_type = builder.getIntNTy(single ? 32 : 16);
  uint64_t magnitude_mask = single ? 0x7FFFFFFFu : 0x7FFFu;
  // An FP8 pass's sum as the accumulator's format holds it, as bits.
  auto pass_result = [&](Value* sum) {
    return single ? truncate_to_single(lowering, sum) : builder.CreateBitCast(builder.CreateFPTrunc(sum, format), bits_type);
  };
  Value* exact = aligned_sum(lowering, terms);
  Value* result = nullptr;
  if (separate_accumulator) {
    second_pass.push_back(decode(lowering, pass_result(exact), accumulator));
    Value* products = builder.CreateBitCast(pass_result(aligned_sum(lowering, second_pass)), format);
    // Two .f16 values add exactly in a double, so either sum is rounded once, to the format.
    Value* total = single ? builder.CreateFAdd(builder.CreateFPTrunc(accumulated.value, format), products)
                          : builder.CreateFPTrunc(builder.CreateFAdd(builder.CreateFPExt(products, builder.getDoubleTy()), accumulated.value), format);
    result = builder.CreateBitCast(total, bits_type);
  } else {
    result = single ? truncate_to_single(lowering, exact) : builder.CreateBitCast(builder.CreateFPTrunc(exact, format), bits_type);
  }
  Value* is_zero = builder.CreateICmpEQ(builder.CreateAnd(result, magnitude_mask), llvm::ConstantInt::get(bits_type, 0));
  Value* naive_bits = builder.CreateBitCast(builder.CreateFPTrunc(naive, format), bits_type);
  result = builder.CreateSelect(is_zero, builder.CreateSelect(all_zero, naive_bits, llvm::ConstantInt::get(bits_type, 0)), result);
  Value* is_nan = builder.CreateFCmpUNO(naive, naive);
  Value* is_infinite = builder.CreateFCmpOEQ(builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, naive),
                                             llvm::ConstantFP::getInfinity(builder.getDoubleTy()));
  result = builder.CreateSelect(is_infinite, naive_bits, result);
  return builder.CreateSelect(is_nan, llvm::ConstantInt::get(bits_type, magnitude_mask), result);
}

// .f64: a chain of IEEE fused multiply-adds in k order, starting from C, as the H200 recordings
// of tests/conformance show. A NaN result is the first NaN among B's element, the running sum
// and A's element, quieted; an invalid operation (∞·0, ∞ - ∞) gives 0xFFF8000000000000.
Value* double_dot(FunctionLowering& lowering, std::span<Value* const> a, std::span<Value* const> b, Value* c) {
  auto& builder = lowering.builder();
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

// .s8/.u8 with .s32 accumulators: exact, wrapping modulo 2^32 or, with .satfinite, clamped.
Value* integer_dot(FunctionLowering& lowering, std::span<Value* const> a, std::span<Value* const> b, Value* c,
                   bool a_signed, bool b_signed, bool saturate) {
  auto& builder = lowering.builder();
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

// mma.sync.aligned.shape.alayout.blayout[.satfinite].dtype.atype.btype.ctype d, a, b, c.
void lower_mma(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const auto& words = instruction.qualifiers.other;
  const auto& operands = instruction.operands;
  std::string_view shape;
  for (const std::string& word : words)
    if (word.starts_with("m8n8") || word.starts_with("m16n8")) shape = word;
  // The types in written order (.tf32 and the FP8 types have no register type of their own).
  std::vector<Element> types;
  for (const Modifier& modifier : instruction.modifiers)
    if (std::optional<Element> element = element_named(modifier.word)) types.push_back(*element);
  bool mixable = types.size() == 4 && ((is_byte(types[1]) && is_byte(types[2])) || (is_eight_bit_float(types[1]) && is_eight_bit_float(types[2])));
  if (operands.size() != 4 || types.size() != 4 || (types[1] != types[2] && !mixable)) {
    lowering.error(instruction.location, "mma needs d, a, b and c and the four types .dtype.atype.btype.ctype");
    return;
  }
  if (types[0] != types[3]) {
    lowering.error(instruction.location, "mma with different .dtype and .ctype is not supported yet");
    return;
  }
  std::optional<MmaForm> form = find_form(shape, types[1], types[0]);
  if (!form) {
    lowering.error(instruction.location, "mma." + std::string(shape) + " with these types is not supported yet");
    return;
  }
  if (!has_word(instruction, "row") || !has_word(instruction, "col")) {
    lowering.error(instruction.location, "mma needs .row.col");
    return;
  }
  uint32_t input_bits = element_bits(form->input);
  uint32_t register_bits = input_bits == 64 ? 64 : 32;
  std::vector<Value*> a_registers = read_registers(lowering, operands[1], register_bits);
  std::vector<Value*> b_registers = read_registers(lowering, operands[2], register_bits);
  uint32_t per_register = register_bits / input_bits;
  if (a_registers.size() * per_register != form->a.elements || b_registers.size() * per_register != form->b.elements) {
    lowering.error(instruction.location, "mma." + std::string(shape) + " needs " + std::to_string(form->a.elements / per_register) +
                                             " A and " + std::to_string(form->b.elements / per_register) + " B registers");
    return;
  }
  uint32_t accumulator_bits = element_bits(form->accumulator);
  uint32_t accumulator_register_bits = accumulator_bits == 64 ? 64 : 32;
  uint32_t per_accumulator_register = accumulator_register_bits / accumulator_bits;
  std::vector<Value*> c_registers = read_registers(lowering, operands[3], accumulator_register_bits);
  auto destinations = elements_of(operands[0]);
  if (c_registers.size() * per_accumulator_register != form->accumulators || destinations.size() != c_registers.size()) {
    lowering.error(instruction.location, "mma." + std::string(shape) + " needs " + std::to_string(form->accumulators / per_accumulator_register) +
                                             " C and D registers");
    return;
  }
  llvm::AllocaInst* a_matrix = gather(lowering, a_registers, input_bits, form->a.layout, form->m, form->k);
  llvm::AllocaInst* b_matrix = gather(lowering, b_registers, input_bits, form->b.layout, form->k, form->n);
  Value* lane = lane_id(lowering);
  llvm::Type* input_type = builder.getIntNTy(input_bits);
  std::vector<Value*> results;
  Value* group = builder.CreateLShr(lane, 2);
  Value* pair = builder.CreateShl(builder.CreateAnd(lane, 3), 1);
  for (uint32_t index = 0; index < form->accumulators; ++index) {
    Value* row = builder.CreateAdd(group, builder.getInt32(8 * (index >> 1)));
    Value* column = builder.CreateAdd(pair, builder.getInt32(index & 1));
    auto [a, b] = dot_operands(lowering, a_matrix, b_matrix, input_type, row, column, form->k, form->n);
    Value* c_register = c_registers[index / per_accumulator_register];
    Value* c = builder.CreateTrunc(builder.CreateLShr(c_register, (index % per_accumulator_register) * accumulator_bits),
                                   builder.getIntNTy(accumulator_bits));
    switch (form->input) {
      case Element::f64: results.push_back(double_dot(lowering, a, b, c)); break;
      case Element::s8: case Element::u8:
        results.push_back(integer_dot(lowering, a, b, c, types[1] == Element::s8, types[2] == Element::s8, has_word(instruction, "satfinite")));
        break;
      default: results.push_back(tensor_core_dot(lowering, a, b, c, types[1], types[2], form->accumulator)); break;
    }
  }
  for (size_t destination = 0; destination < destinations.size(); ++destination) {
    Value* word = builder.getIntN(accumulator_register_bits, 0);
    for (uint32_t part = 0; part < per_accumulator_register; ++part) {
      Value* element = builder.CreateZExt(results[destination * per_accumulator_register + part], word->getType());
      word = builder.CreateOr(word, builder.CreateShl(element, part * accumulator_bits));
    }
    lowering.write(*destinations[destination], word, accumulator_register_bits == 64 ? ScalarType::b64 : ScalarType::b32);
  }
}

// wmma: the ISA leaves the fragments' layout to the implementation and only asks that they
// pass between wmma.load, wmma.mma and wmma.store of one shape and type. Here lane L holds
// elements L·E … L·E+E-1 of the matrix in row-major order (E: the matrix's elements over the
// warp's 32 lanes), in its registers' slots from the lowest; where the ISA gives a fragment more
// slots than that (.f16 A and B), the slots beyond E repeat the first E. Each element's product
// is computed as mma.sync computes it for the same types and k.
struct WmmaMatrix {
  uint32_t rows, columns;
  Element element;

  uint32_t per_lane() const { return rows * columns / warp_size; }
  uint32_t register_bits() const { return element_bits(element) == 64 ? 64 : 32; }
  uint32_t per_register() const { return register_bits() / element_bits(element); }
  Position position(uint32_t lane, uint32_t index) const {
    uint32_t linear = lane * per_lane() + index;
    return {linear / columns, linear % columns};
  }
};

struct WmmaShape {
  uint32_t m, n, k;
};

std::optional<WmmaShape> wmma_shape(FunctionLowering& lowering, const Instruction& instruction) {
  static constexpr std::pair<std::string_view, WmmaShape> shapes[] = {
      {"m16n16k16", {16, 16, 16}}, {"m32n8k16", {32, 8, 16}}, {"m8n32k16", {8, 32, 16}},
      {"m16n16k8", {16, 16, 8}},   {"m8n8k4", {8, 8, 4}},
  };
  for (const auto& [name, shape] : shapes)
    if (has_word(instruction, name)) return shape;
  lowering.error(instruction.location, "wmma needs a shape: .m16n16k16, .m32n8k16, .m8n32k16, .m16n16k8 or .m8n8k4");
  return std::nullopt;
}

std::vector<Element> written_elements(const Instruction& instruction) {
  std::vector<Element> elements;
  for (const Modifier& modifier : instruction.modifiers)
    if (std::optional<Element> element = element_named(modifier.word)) elements.push_back(*element);
  return elements;
}

// The fragment's registers, checked to hold `matrix`'s share of each lane.
std::optional<std::vector<const Operand*>> fragment_registers(FunctionLowering& lowering, const Instruction& instruction,
                                                              const Operand& operand, const WmmaMatrix& matrix) {
  auto registers = elements_of(operand);
  size_t slots = registers.size() * matrix.per_register();
  if (slots < matrix.per_lane() || slots % matrix.per_lane() != 0) {
    lowering.error(operand.location, "this wmma fragment needs " +
                                         std::to_string(matrix.per_lane() / matrix.per_register()) + " registers");
    return std::nullopt;
  }
  return registers;
}

// The lane's elements of `matrix` as the registers hold them; slots beyond the lane's share
// repeat it.
void write_fragment(FunctionLowering& lowering, const std::vector<const Operand*>& registers, const WmmaMatrix& matrix,
                    const std::vector<Value*>& elements) {
  auto& builder = lowering.builder();
  uint32_t bits = element_bits(matrix.element);
  for (size_t index = 0; index < registers.size(); ++index) {
    Value* word = builder.getIntN(matrix.register_bits(), 0);
    for (uint32_t part = 0; part < matrix.per_register(); ++part) {
      Value* element = builder.CreateZExt(elements[(index * matrix.per_register() + part) % elements.size()], word->getType());
      word = builder.CreateOr(word, builder.CreateShl(element, part * bits));
    }
    lowering.write(*registers[index], word, matrix.register_bits() == 64 ? ScalarType::b64 : ScalarType::b32);
  }
}

std::vector<Value*> read_fragment(FunctionLowering& lowering, const std::vector<const Operand*>& registers, const WmmaMatrix& matrix) {
  auto& builder = lowering.builder();
  uint32_t bits = element_bits(matrix.element);
  std::vector<Value*> elements;
  for (uint32_t index = 0; index < matrix.per_lane(); ++index) {
    Value* word = lowering.read(*registers[index / matrix.per_register()],
                                matrix.register_bits() == 64 ? ScalarType::b64 : ScalarType::b32);
    elements.push_back(builder.CreateTrunc(builder.CreateLShr(word, (index % matrix.per_register()) * bits), builder.getIntNTy(bits)));
  }
  return elements;
}

// Row and column of the lane's element `index`.
std::pair<Value*, Value*> element_position(FunctionLowering& lowering, const WmmaMatrix& matrix, uint32_t index) {
  auto& builder = lowering.builder();
  Value* linear = builder.CreateAdd(builder.CreateMul(lane_id(lowering), builder.getInt32(matrix.per_lane())), builder.getInt32(index));
  return {builder.CreateUDiv(linear, builder.getInt32(matrix.columns)), builder.CreateURem(linear, builder.getInt32(matrix.columns))};
}

// wmma.load.{a,b,c}.sync.aligned.layout.shape{.space}.type r, [p]{, stride} and
// wmma.store.d.sync.aligned.layout.shape{.space}.type [p], r{, stride}: element (i, j) of a
// .row matrix is at p + i·stride + j, of a .col one at p + j·stride + i; the stride, in
// elements, defaults to the matrix's row (column) length.
void lower_wmma_access(FunctionLowering& lowering, const Instruction& instruction, bool load) {
  auto& builder = lowering.builder();
  std::optional<WmmaShape> shape = wmma_shape(lowering, instruction);
  if (!shape) return;
  std::vector<Element> elements = written_elements(instruction);
  bool row_major = has_word(instruction, "row");
  char which = has_word(instruction, "a") ? 'a' : has_word(instruction, "b") ? 'b' : has_word(instruction, "c") ? 'c' : 'd';
  const auto& operands = instruction.operands;
  if (elements.size() != 1 || row_major == has_word(instruction, "col") || (load ? which == 'd' : which != 'd') ||
      operands.size() < 2 || operands.size() > 3) {
    lowering.error(instruction.location, load ? "wmma.load needs .a, .b or .c, .row or .col, a type, r, [p] and an optional stride"
                                              : "wmma.store needs .d, .row or .col, a type, [p], r and an optional stride");
    return;
  }
  WmmaMatrix matrix = which == 'a' ? WmmaMatrix{shape->m, shape->k, elements[0]}
                      : which == 'b' ? WmmaMatrix{shape->k, shape->n, elements[0]}
                                     : WmmaMatrix{shape->m, shape->n, elements[0]};
  const Operand& fragment = operands[load ? 0 : 1];
  auto registers = fragment_registers(lowering, instruction, fragment, matrix);
  if (!registers) return;
  Value* base = lowering.address(operands[load ? 1 : 0], instruction.qualifiers.space);
  Value* stride = operands.size() == 3 ? lowering.read(operands[2], ScalarType::u32)
                                       : builder.getInt32(row_major ? matrix.columns : matrix.rows);
  uint32_t bits = element_bits(matrix.element);
  std::vector<Value*> stored = load ? std::vector<Value*>{} : read_fragment(lowering, *registers, matrix);
  std::vector<Value*> loaded;
  for (uint32_t index = 0; index < matrix.per_lane(); ++index) {
    auto [row, column] = element_position(lowering, matrix, index);
    Value* offset = row_major ? builder.CreateAdd(builder.CreateMul(row, stride), column)
                              : builder.CreateAdd(builder.CreateMul(column, stride), row);
    Value* bytes = builder.CreateMul(builder.CreateZExt(offset, builder.getInt64Ty()), builder.getInt64(bits / 8));
    Value* pointer = builder.CreateGEP(builder.getInt8Ty(), base, bytes);
    if (load) loaded.push_back(builder.CreateAlignedLoad(builder.getIntNTy(bits), pointer, llvm::Align(bits / 8)));
    else builder.CreateAlignedStore(stored[index], pointer, llvm::Align(bits / 8));
  }
  if (load) write_fragment(lowering, *registers, matrix, loaded);
}

// wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype d, a, b, c (.f16 A and B) or
// .dtype.atype.btype.ctype, with .satfinite for integers. The fragments hold their matrices
// whatever layout they were loaded from, so .alayout and .blayout change nothing.
void lower_wmma_mma(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  std::optional<WmmaShape> shape = wmma_shape(lowering, instruction);
  if (!shape) return;
  std::vector<Element> types = written_elements(instruction);
  if (types.size() == 2) types = {types[0], Element::f16, Element::f16, types[1]};
  const auto& operands = instruction.operands;
  if (types.size() != 4 || operands.size() != 4) {
    lowering.error(instruction.location, "wmma.mma needs d, a, b, c and the types .dtype.ctype or .dtype.atype.btype.ctype");
    return;
  }
  if (types[0] != types[3]) {
    lowering.error(instruction.location, "wmma.mma with different .dtype and .ctype is not supported yet");
    return;
  }
  Element input = types[1];
  bool known = (input == Element::f16 && (types[0] == Element::f16 || types[0] == Element::f32) && shape->k == 16) ||
               (input == Element::bf16 && types[0] == Element::f32 && shape->k == 16) ||
               (input == Element::tf32 && types[0] == Element::f32 && shape->k == 8) ||
               (is_byte(input) && is_byte(types[2]) && types[0] == Element::s32 && shape->k == 16) ||
               (input == Element::f64 && types[0] == Element::f64 && shape->k == 4);
  if (!known || (types[1] != types[2] && !is_byte(input))) {
    lowering.error(instruction.location, "wmma.mma with these shape and types is not supported yet");
    return;
  }
  WmmaMatrix a_matrix{shape->m, shape->k, types[1]}, b_matrix{shape->k, shape->n, types[2]}, c_matrix{shape->m, shape->n, types[3]};
  auto d_registers = fragment_registers(lowering, instruction, operands[0], c_matrix);
  auto a_registers = fragment_registers(lowering, instruction, operands[1], a_matrix);
  auto b_registers = fragment_registers(lowering, instruction, operands[2], b_matrix);
  auto c_registers = fragment_registers(lowering, instruction, operands[3], c_matrix);
  if (!d_registers || !a_registers || !b_registers || !c_registers) return;
  // Only the registers that hold each lane's share take part in the exchange.
  auto share = [&](const std::vector<const Operand*>& registers, const WmmaMatrix& matrix) {
    std::vector<Value*> values;
    for (uint32_t index = 0; index < matrix.per_lane() / matrix.per_register(); ++index)
      values.push_back(lowering.read(*registers[index], matrix.register_bits() == 64 ? ScalarType::b64 : ScalarType::b32));
    return values;
  };
  auto a_all = gather(lowering, share(*a_registers, a_matrix), element_bits(a_matrix.element),
                      [&](uint32_t lane, uint32_t index) { return a_matrix.position(lane, index); }, a_matrix.rows, a_matrix.columns);
  auto b_all = gather(lowering, share(*b_registers, b_matrix), element_bits(b_matrix.element),
                      [&](uint32_t lane, uint32_t index) { return b_matrix.position(lane, index); }, b_matrix.rows, b_matrix.columns);
  std::vector<Value*> c = read_fragment(lowering, *c_registers, c_matrix);
  llvm::Type* input_type = builder.getIntNTy(element_bits(input));
  std::vector<Value*> results;
  for (uint32_t index = 0; index < c_matrix.per_lane(); ++index) {
    auto [row, column] = element_position(lowering, c_matrix, index);
    auto [a, b] = dot_operands(lowering, a_all, b_all, input_type, row, column, shape->k, shape->n);
    switch (input) {
      case Element::f64: results.push_back(double_dot(lowering, a, b, c[index])); break;
      case Element::s8: case Element::u8:
        results.push_back(integer_dot(lowering, a, b, c[index], types[1] == Element::s8, types[2] == Element::s8,
                                      has_word(instruction, "satfinite")));
        break;
      default: {
        // The H200 computes .tf32 m16n16k8 as two steps of k = 4, the first's sum truncated to
        // .f32 as an mma.sync's would be (fitted to the conformance recordings).
        size_t step = input == Element::tf32 ? 4 : a.size();
        Value* sum = c[index];
        for (size_t first = 0; first < a.size(); first += step)
          sum = tensor_core_dot(lowering, std::span(a).subspan(first, step), std::span(b).subspan(first, step), sum,
                                types[1], types[2], types[0]);
        results.push_back(sum);
        break;
      }
    }
  }
  write_fragment(lowering, *d_registers, c_matrix, results);
}

void lower_wmma(FunctionLowering& lowering, const Instruction& instruction) {
  if (has_word(instruction, "mma")) lower_wmma_mma(lowering, instruction);
  else if (has_word(instruction, "load") || has_word(instruction, "store")) lower_wmma_access(lowering, instruction, has_word(instruction, "load"));
  else lowering.error(instruction.location, "wmma needs .load, .store or .mma");
}

// ldmatrix/stmatrix .m8n8.x1/.x2/.x4[.trans].b16: lanes 8j…8j+7 give the addresses of the rows
// of matrix j; lane l holds, of each matrix, the pair (row l/4, columns 2(l%4) and +1), or with
// .trans the same pair of the transposed matrix.
struct MatrixAccess {
  uint32_t count;
  bool transposed;
};

std::optional<MatrixAccess> matrix_access(FunctionLowering& lowering, const Instruction& instruction) {
  uint32_t count = has_word(instruction, "x4") ? 4 : has_word(instruction, "x2") ? 2 : has_word(instruction, "x1") ? 1 : 0;
  const auto& types = instruction.qualifiers.types;
  if (count == 0 || !has_word(instruction, "m8n8") || types.size() != 1 || bit_width(types[0]) != 16) {
    lowering.error(instruction.location, instruction.opcode + " needs .m8n8, .x1, .x2 or .x4 and .b16");
    return std::nullopt;
  }
  return MatrixAccess{count, has_word(instruction, "trans")};
}

// Where the running lane's pair of matrix `index` starts, as an element index into the
// 8×8 matrices that `matrices` lays out one after another, and the step to its second element.
void pair_of_lane(FunctionLowering& lowering, Value* lane, uint32_t index, bool transposed, Value*& first, uint32_t& step) {
  auto& builder = lowering.builder();
  Value* group = builder.CreateLShr(lane, 2);
  Value* pair = builder.CreateShl(builder.CreateAnd(lane, 3), 1);
  Value* offset = transposed ? builder.CreateAdd(builder.CreateShl(pair, 3), group) : builder.CreateAdd(builder.CreateShl(group, 3), pair);
  first = builder.CreateAdd(builder.getInt32(index * 64), offset);
  step = transposed ? 8 : 1;
}

// The row this lane addresses exists: lanes beyond the last matrix's give no address.
Value* addresses_row(FunctionLowering& lowering, Value* lane, uint32_t count) {
  return lowering.builder().CreateICmpULT(lane, lowering.builder().getInt32(8 * count));
}

void lower_ldmatrix(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  std::optional<MatrixAccess> access = matrix_access(lowering, instruction);
  if (!access) return;
  auto destinations = elements_of(instruction.operands[0]);
  if (destinations.size() != access->count) {
    lowering.error(instruction.location, "ldmatrix needs one destination register per matrix");
    return;
  }
  Value* lane = lane_id(lowering);
  // Lanes without a row read zeros from their own storage instead of an address they did not give.
  llvm::AllocaInst* nothing = thread_array(lowering, builder.getInt64Ty(), 2);
  builder.CreateStore(llvm::ConstantAggregateZero::get(nothing->getAllocatedType()), nothing);
  Value* pointer = builder.CreateSelect(addresses_row(lowering, lane, access->count),
                                        lowering.address(instruction.operands[1], instruction.qualifiers.space), nothing);
  std::vector<Value*> row_halves{builder.CreateAlignedLoad(builder.getInt64Ty(), pointer, llvm::Align(16)),
                                 builder.CreateAlignedLoad(builder.getInt64Ty(), builder.CreateConstGEP1_64(builder.getInt8Ty(), pointer, 8), llvm::Align(8))};
  // Lane r of the 8·count addressing lanes holds row r of the stacked matrices.
  auto row_layout = [](uint32_t addressing_lane, uint32_t index) { return Position{addressing_lane, index}; };
  llvm::AllocaInst* matrices = gather(lowering, row_halves, 16, row_layout, warp_size, 8);
  for (uint32_t index = 0; index < access->count; ++index) {
    Value* first = nullptr;
    uint32_t step = 0;
    pair_of_lane(lowering, lane, index, access->transposed, first, step);
    Value* low = builder.CreateLoad(builder.getInt16Ty(), array_element(lowering, matrices, first));
    Value* high = builder.CreateLoad(builder.getInt16Ty(), array_element(lowering, matrices, builder.CreateAdd(first, builder.getInt32(step))));
    Value* word = builder.CreateOr(builder.CreateZExt(low, builder.getInt32Ty()), builder.CreateShl(builder.CreateZExt(high, builder.getInt32Ty()), 16));
    lowering.write(*destinations[index], word, ScalarType::b32);
  }
}

void lower_stmatrix(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  std::optional<MatrixAccess> access = matrix_access(lowering, instruction);
  if (!access) return;
  std::vector<Value*> sources = read_registers(lowering, instruction.operands[1], 32);
  if (sources.size() != access->count) {
    lowering.error(instruction.location, "stmatrix needs one source register per matrix");
    return;
  }
  Value* lane = lane_id(lowering);
  // Each lane's register j holds its pair of matrix j: elements 2(l%4), +1 of row 8j + l/4.
  auto pair_layout = [](uint32_t holder, uint32_t index) {
    return Position{8 * (index >> 1) + (holder >> 2), 2 * (holder & 3) + (index & 1)};
  };
  llvm::AllocaInst* matrices = gather(lowering, sources, 16, pair_layout, 8 * access->count, 8);
  Value* pointer = lowering.address(instruction.operands[0], instruction.qualifiers.space);
  Value* matrix = builder.CreateLShr(lane, 3);
  Value* row = builder.CreateAnd(lane, 7);
  llvm::Function* function = builder.GetInsertBlock()->getParent();
  auto* storing = llvm::BasicBlock::Create(lowering.context(), "stmatrix.row", function);
  auto* done = llvm::BasicBlock::Create(lowering.context(), "stmatrix.done", function);
  builder.CreateCondBr(addresses_row(lowering, lane, access->count), storing, done);
  builder.SetInsertPoint(storing);
  for (uint32_t column = 0; column < 8; ++column) {
    // Stored row r of a transposed matrix is column r of the held one.
    Value* held_row = access->transposed ? builder.getInt32(column) : row;
    Value* held_column = access->transposed ? row : builder.getInt32(column);
    Value* index = builder.CreateAdd(builder.CreateShl(builder.CreateAdd(builder.CreateShl(matrix, 3), held_row), 3), held_column);
    Value* element = builder.CreateLoad(builder.getInt16Ty(), array_element(lowering, matrices, index));
    builder.CreateAlignedStore(element, builder.CreateConstGEP1_64(builder.getInt8Ty(), pointer, column * 2), llvm::Align(2));
  }
  builder.CreateBr(done);
  builder.SetInsertPoint(done);
}

}  // namespace

// movmatrix.sync.aligned.m8n8.trans.b16 d, a: the warp's 8 x 8 matrix of 16-bit elements, held as
// ldmatrix leaves one (lane l: row l/4, columns 2(l%4) and 2(l%4)+1, the first in the low half),
// comes back transposed, so lane l receives rows 2(l%4) and 2(l%4)+1 of column l/4.
void lower_movmatrix(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  if (instruction.operands.size() != 2 || !has_word(instruction, "sync") || !has_word(instruction, "m8n8") ||
      !has_word(instruction, "trans") || qualifiers.types.size() != 1 || qualifiers.types[0] != ScalarType::b16) {
    lowering.error(instruction.location, "movmatrix is movmatrix.sync.aligned.m8n8.trans.b16 d, a");
    return;
  }
  exchange(lowering, lowering.read(instruction.operands[1], ScalarType::b32), builder.getInt32(~0u));
  Value* lane = lane_id(lowering);
  Value* column = builder.CreateLShr(lane, 2);
  // Element (r, c) is in lane 4r + c/2, in the half c%2.
  Value* first = builder.CreateAdd(builder.CreateShl(builder.CreateAnd(lane, 3), 3), builder.CreateLShr(column, 1));
  Value* shift = builder.CreateShl(builder.CreateAnd(column, 1), 4);
  auto element = [&](Value* source) {
    Value* offered = builder.CreateTrunc(peer(lowering, source), builder.getInt32Ty());
    return builder.CreateAnd(builder.CreateLShr(offered, shift), 0xffff);
  };
  Value* result = builder.CreateOr(element(first), builder.CreateShl(element(builder.CreateAdd(first, builder.getInt32(4))), 16));
  lowering.write(instruction.operands[0], result, ScalarType::b32);
}

void add_matrix_lowerings(LoweringTable& table) {
  table["mma"] = lower_mma;
  table["wmma"] = lower_wmma;
  table["ldmatrix"] = lower_ldmatrix;
  table["stmatrix"] = lower_stmatrix;
  table["movmatrix"] = lower_movmatrix;
}

}  // namespace xcuda::ptx
