// wgmma (sm_90a): a warpgroup, four consecutive warps of the block, multiplies a 64 × k A by a
// k × N B from shared memory and accumulates into a 64 × N D. Warp w of the warpgroup holds rows
// 16w … 16w+15 of D, and of A when A is in registers, so each warp computes its own rows from its
// own A and the whole of B: the warp-level machinery of tensor_core.h is enough, and no warp
// waits for another. On the host each wgmma.mma_async completes when it is issued, which is one
// of the orders the PTX memory model allows (the program may touch neither D nor the operands'
// shared memory until its wgmma.wait_group), so fence, commit_group and wait_group have nothing
// left to do. Products are summed as mma.sync's are (tensor_core.h), which an H200's wgmma
// matches bit for bit for .f16, .bf16 and .tf32 inputs (tests/cuda/warpgroup_mma.cu); its FP8
// sums keep fewer bits, and in one pass (tensor_core.cpp, Adder::warpgroup).
#include <charconv>
#include <optional>
#include <string>

#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"
#include "lower/tensor_core.h"

namespace xcuda::ptx {
namespace {

using llvm::Value;
using namespace tensor_core;

constexpr uint32_t warpgroup_rows = 64;
constexpr uint32_t warp_rows = 16;

struct WarpgroupForm {
  uint32_t n, k;
  Element accumulator, a_type, b_type;
};

// m64nNk16 (.f16, .bf16), m64nNk8 (.tf32) and m64nNk32 (FP8, .s8/.u8), with the N the ISA lists
// for each.
std::optional<WarpgroupForm> find_form(FunctionLowering& lowering, const Instruction& instruction) {
  std::string_view shape;
  for (const std::string& word : instruction.qualifiers.other)
    if (word.starts_with("m64n")) shape = word;
  uint32_t n = 0, k = 0;
  size_t k_at = shape.find('k');
  std::string_view n_digits = shape.substr(4, k_at == std::string_view::npos ? 0 : k_at - 4);
  std::string_view k_digits = k_at == std::string_view::npos ? std::string_view() : shape.substr(k_at + 1);
  bool parsed = !n_digits.empty() && !k_digits.empty() &&
                std::from_chars(n_digits.data(), n_digits.data() + n_digits.size(), n).ptr == n_digits.data() + n_digits.size() &&
                std::from_chars(k_digits.data(), k_digits.data() + k_digits.size(), k).ptr == k_digits.data() + k_digits.size();
  std::vector<Element> types = written_elements(instruction);
  if (!parsed || types.size() != 3) {
    lowering.error(instruction.location, "wgmma.mma_async needs a shape .m64nNkK and the types .dtype.atype.btype");
    return std::nullopt;
  }
  WarpgroupForm form{n, k, types[0], types[1], types[2]};
  Element input = form.a_type;
  bool half = (input == Element::f16 || input == Element::bf16) && form.b_type == input && k == 16 &&
              (form.accumulator == Element::f32 || (form.accumulator == Element::f16 && input == Element::f16));
  bool tf32 = input == Element::tf32 && form.b_type == input && k == 8 && form.accumulator == Element::f32;
  bool eight_bit_float = is_eight_bit_float(input) && is_eight_bit_float(form.b_type) && k == 32 &&
                         (form.accumulator == Element::f32 || form.accumulator == Element::f16);
  bool integer = is_byte(input) && is_byte(form.b_type) && k == 32 && form.accumulator == Element::s32;
  // The integer forms list N = 8, 16, 24, 32 and then multiples of 16.
  bool n_listed = n >= 8 && n <= 256 && n % 8 == 0 && (!integer || n <= 32 || n % 16 == 0);
  if (!(half || tf32 || eight_bit_float || integer) || !n_listed) {
    lowering.error(instruction.location, "wgmma.mma_async." + std::string(shape) + " with these types is not a form the ISA defines");
    return std::nullopt;
  }
  if (has_word(instruction, "satfinite") && !integer) {
    lowering.error(instruction.location, "wgmma.mma_async takes .satfinite only with .s32 accumulators");
    return std::nullopt;
  }
  return form;
}

// An immediate operand that must be one of `allowed`.
std::optional<int64_t> immediate_of(FunctionLowering& lowering, const Operand& operand, std::initializer_list<int64_t> allowed,
                                    std::string_view what) {
  if (operand.kind == Operand::Kind::integer)
    for (int64_t value : allowed)
      if (static_cast<int64_t>(operand.integer) == value) return value;
  lowering.error(operand.location, std::string(what) + " must be an immediate " +
                                       (allowed.size() == 2 && *allowed.begin() == 1 ? "1 or -1" : "0 or 1"));
  return std::nullopt;
}

// A shared-memory matrix descriptor's fields, the byte offsets decoded.
struct Descriptor {
  Value* start;        // shared address
  Value* leading;      // leading dimension byte offset
  Value* stride;       // stride dimension byte offset
  Value* base_offset;  // the swizzle pattern's phase at the start
  Value* row_shift;    // log2 of the swizzle's bytes (of 16 without swizzle)
  Value* swizzled;     // i1
};

Descriptor decode_descriptor(FunctionLowering& lowering, Value* bits) {
  auto& builder = lowering.builder();
  auto field = [&](uint32_t first, uint64_t mask) {
    return builder.CreateTrunc(builder.CreateAnd(builder.CreateLShr(bits, first), mask), builder.getInt32Ty());
  };
  Value* mode = field(62, 3);
  // Modes 1, 2 and 3 swizzle 128, 64 and 32 bytes: rows of 2^(8 - mode) bytes.
  Value* swizzled = builder.CreateICmpNE(mode, builder.getInt32(0));
  Value* row_shift = builder.CreateSelect(swizzled, builder.CreateSub(builder.getInt32(8), mode), builder.getInt32(4));
  return {builder.CreateShl(field(0, 0x3FFF), 4), builder.CreateShl(field(16, 0x3FFF), 4), builder.CreateShl(field(32, 0x3FFF), 4),
          field(49, 7), row_shift, swizzled};
}

// Where element (mn, k) of an operand lies, mn its row of A or column of B, in the ISA's
// canonical layouts: 8 rows of 16 bytes (one "row" of R = 16, 32, 64 or 128 bytes when swizzled)
// form a core matrix; K-major, rows run along M or N and R bytes along K, the next 8 rows SBO
// on and, without swizzle, the next 16 bytes of K LBO on; MN-major, rows run along K and R bytes
// along M or N, the next 8 rows of K SBO on (LBO without swizzle) and the next R bytes of M or N
// LBO on (SBO without swizzle). Swizzling then exchanges the 16-byte chunks of each R-byte row:
// address bits 4 … 4+s-1 take the exclusive or of bits 7 … 7+s-1 (R = 2^(4+s)), those bits
// counted from where the pattern starts, which the base offset gives for a pattern that does
// not start at a multiple of 8R.
Value* element_pointer(FunctionLowering& lowering, const Descriptor& descriptor, Value* mn, uint32_t k, bool mn_major,
                       uint32_t element_bytes) {
  auto& builder = lowering.builder();
  Value* row_bytes_mask = builder.CreateSub(builder.CreateShl(builder.getInt32(1), descriptor.row_shift), builder.getInt32(1));
  Value* offset = nullptr;
  if (mn_major) {
    Value* mn_bytes = builder.CreateMul(mn, builder.getInt32(element_bytes));
    Value* next_columns = builder.CreateSelect(descriptor.swizzled, descriptor.leading, descriptor.stride);
    Value* next_rows = builder.CreateSelect(descriptor.swizzled, descriptor.stride, descriptor.leading);
    offset = builder.CreateAdd(builder.CreateAnd(mn_bytes, row_bytes_mask),
                               builder.CreateMul(builder.CreateLShr(mn_bytes, descriptor.row_shift), next_columns));
    offset = builder.CreateAdd(offset, builder.CreateShl(builder.getInt32(k % 8), descriptor.row_shift));
    offset = builder.CreateAdd(offset, builder.CreateMul(builder.getInt32(k / 8), next_rows));
  } else {
    uint32_t k_bytes = k * element_bytes;
    offset = builder.CreateShl(builder.CreateAnd(mn, 7), descriptor.row_shift);
    offset = builder.CreateAdd(offset, builder.CreateMul(builder.CreateLShr(mn, 3), descriptor.stride));
    Value* next_chunk = builder.CreateSelect(descriptor.swizzled, builder.getInt32(16), descriptor.leading);
    offset = builder.CreateAdd(offset, builder.CreateAdd(builder.getInt32(k_bytes % 16),
                                                         builder.CreateMul(builder.getInt32(k_bytes / 16), next_chunk)));
  }
  Value* address = builder.CreateAdd(descriptor.start, offset);
  Value* swizzle_mask = builder.CreateLShr(row_bytes_mask, 4);
  Value* phase = builder.CreateAnd(builder.CreateSub(builder.CreateLShr(address, 7), descriptor.base_offset), swizzle_mask);
  address = builder.CreateXor(address, builder.CreateShl(phase, 4));
  return builder.CreateGEP(builder.getInt8Ty(), lowering.shared_base(), builder.CreateZExt(address, builder.getInt64Ty()));
}

// wgmma.mma_async.sync.aligned.shape.dtype.atype.btype d, a-desc | {a}, b-desc, scale-d{,
// imm-scale-a, imm-scale-b{, imm-trans-a}, imm-trans-b}, and for .s8/.u8
// ….shape{.satfinite}.s32.atype.btype d, a-desc | {a}, b-desc, scale-d.
void lower_mma_async(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  if (has_word(instruction, "sp") || has_modifier(instruction, "b1")) {
    report_unsupported_form(lowering, instruction);
    return;
  }
  std::optional<WarpgroupForm> form = find_form(lowering, instruction);
  if (!form) return;
  const auto& operands = instruction.operands;
  bool a_in_registers = operands.size() > 1 && operands[1].kind == Operand::Kind::vector;
  bool integer = form->accumulator == Element::s32;
  bool transposable = form->a_type == Element::f16 || form->a_type == Element::bf16;
  size_t expected = integer ? 4 : transposable ? (a_in_registers ? 7 : 8) : 6;
  if (operands.size() != expected) {
    lowering.error(instruction.location, "this wgmma.mma_async takes d, " + std::string(a_in_registers ? "{a}" : "a-desc") + ", b-desc, scale-d" +
                                             (integer ? "" : ", imm-scale-a, imm-scale-b") +
                                             (transposable ? (a_in_registers ? ", imm-trans-b" : ", imm-trans-a, imm-trans-b") : ""));
    return;
  }
  bool negate_a = false, negate_b = false, a_mn_major = false, b_mn_major = false;
  if (!integer) {
    auto scale_a = immediate_of(lowering, operands[4], {1, -1}, "imm-scale-a");
    auto scale_b = immediate_of(lowering, operands[5], {1, -1}, "imm-scale-b");
    if (!scale_a || !scale_b) return;
    negate_a = *scale_a == -1, negate_b = *scale_b == -1;
  }
  if (transposable) {
    auto trans_b = immediate_of(lowering, operands.back(), {0, 1}, "imm-trans-b");
    auto trans_a = a_in_registers ? std::optional<int64_t>(0) : immediate_of(lowering, operands[6], {0, 1}, "imm-trans-a");
    if (!trans_a || !trans_b) return;
    a_mn_major = *trans_a == 1, b_mn_major = *trans_b == 1;
  }
  uint32_t input_bits = element_bits(form->a_type);
  uint32_t accumulator_bits = element_bits(form->accumulator);
  uint32_t accumulators = form->n / 2;  // per thread
  auto destinations = elements_of(operands[0]);
  if (destinations.size() != accumulators * accumulator_bits / 32) {
    lowering.error(operands[0].location, "this wgmma.mma_async needs " + std::to_string(accumulators * accumulator_bits / 32) + " D registers");
    return;
  }
  // A warp's fragment of A lies as mma.sync's m16n8kK fragment does.
  llvm::AllocaInst* a_fragment = nullptr;
  if (a_in_registers) {
    std::vector<Value*> a_registers = read_registers(lowering, operands[1], 32);
    if (a_registers.size() != 4) {
      lowering.error(operands[1].location, "wgmma.mma_async's A in registers takes four registers");
      return;
    }
    Layout layout = input_bits == 16 ? a_16bit : input_bits == 32 ? a_32bit : a_packed<4>;
    a_fragment = gather(lowering, Fragment{a_registers, input_bits, layout, warp_rows, form->k});
  }
  std::optional<Descriptor> a_descriptor;
  if (!a_in_registers) a_descriptor = decode_descriptor(lowering, lowering.read(operands[1], ScalarType::b64));
  Descriptor b_descriptor = decode_descriptor(lowering, lowering.read(operands[2], ScalarType::b64));
  Value* keep_d = lowering.read(operands[3], ScalarType::pred);

  // Without scale-d, C is -0, which leaves every sum as IEEE addition would have it.
  llvm::IntegerType* accumulator_type = builder.getIntNTy(accumulator_bits);
  uint64_t no_accumulator = integer ? 0 : uint64_t{1} << (accumulator_bits - 1);
  llvm::AllocaInst* accumulated = thread_array(builder, accumulator_type, accumulators);
  uint32_t per_register = 32 / accumulator_bits;
  for (size_t destination = 0; destination < destinations.size(); ++destination) {
    Value* word = lowering.read(*destinations[destination], ScalarType::b32);
    for (uint32_t part = 0; part < per_register; ++part) {
      Value* element = builder.CreateTrunc(builder.CreateLShr(word, part * accumulator_bits), accumulator_type);
      element = builder.CreateSelect(keep_d, element, llvm::ConstantInt::get(accumulator_type, no_accumulator));
      builder.CreateStore(element, array_element(builder, accumulated, builder.getInt32(static_cast<uint32_t>(destination) * per_register + part)));
    }
  }

  // Each of the thread's accumulators in turn, in a loop, since N runs to 256.
  llvm::Function* function = builder.GetInsertBlock()->getParent();
  llvm::BasicBlock* entry = builder.GetInsertBlock();
  auto* body = llvm::BasicBlock::Create(lowering.context(), "wgmma.element", function);
  auto* done = llvm::BasicBlock::Create(lowering.context(), "wgmma.done", function);
  Value* lane = lane_id(lowering);
  Value* warp = builder.CreateCall(lowering.module().intrinsic(intrinsics::special_register("warpid", ""), builder.getInt32Ty(), {builder.getPtrTy()}),
                                   {lowering.thread_context()});
  // %warpid is the warp's place in the block on the host, so its low bits give its place in the warpgroup.
  Value* first_row = builder.CreateMul(builder.CreateAnd(warp, warpgroup_rows / warp_rows - 1), builder.getInt32(warp_rows));
  builder.CreateBr(body);
  builder.SetInsertPoint(body);
  llvm::PHINode* index = builder.CreatePHI(builder.getInt32Ty(), 2);
  index->addIncoming(builder.getInt32(0), entry);
  // Accumulator i lies as mma.sync's m16n8 C does, in the columns of the 8-column tile i / 4.
  Value* row = builder.CreateAdd(builder.CreateLShr(lane, 2), builder.CreateShl(builder.CreateAnd(builder.CreateLShr(index, 1), 1), 3));
  Value* column = builder.CreateAdd(builder.CreateShl(builder.CreateLShr(index, 2), 3),
                                    builder.CreateAdd(builder.CreateShl(builder.CreateAnd(lane, 3), 1), builder.CreateAnd(index, 1)));
  llvm::Type* input_type = builder.getIntNTy(input_bits);
  Value* sign = llvm::ConstantInt::get(input_type, uint64_t{1} << (input_bits - 1));
  std::vector<Value*> a, b;
  for (uint32_t step = 0; step < form->k; ++step) {
    Value* a_element = nullptr;
    if (a_fragment) {
      Value* a_index = builder.CreateAdd(builder.CreateMul(row, builder.getInt32(form->k)), builder.getInt32(step));
      a_element = builder.CreateLoad(input_type, array_element(builder, a_fragment, a_index));
    } else {
      Value* pointer = element_pointer(lowering, *a_descriptor, builder.CreateAdd(first_row, row), step, a_mn_major, input_bits / 8);
      a_element = builder.CreateAlignedLoad(input_type, pointer, llvm::Align(input_bits / 8));
    }
    Value* b_element = builder.CreateAlignedLoad(input_type, element_pointer(lowering, b_descriptor, column, step, b_mn_major, input_bits / 8),
                                                 llvm::Align(input_bits / 8));
    a.push_back(negate_a ? builder.CreateXor(a_element, sign) : a_element);
    b.push_back(negate_b ? builder.CreateXor(b_element, sign) : b_element);
  }
  Value* slot = array_element(builder, accumulated, index);
  Value* c = builder.CreateLoad(accumulator_type, slot);
  // tensor_core_dot reads the terms from memory, in a loop.
  auto stored = [&](const std::vector<Value*>& elements) {
    llvm::AllocaInst* array = thread_array(builder, input_type, form->k);
    for (uint32_t step = 0; step < form->k; ++step) builder.CreateStore(elements[step], array_element(builder, array, builder.getInt32(step)));
    return array;
  };
  Value* result = integer ? integer_dot(builder, a, b, c, form->a_type == Element::s8, form->b_type == Element::s8,
                                        has_word(instruction, "satfinite"))
                          : tensor_core_dot(builder, DotTerms{stored(a), stored(b), 1}, builder.getInt32(form->k), c, form->a_type,
                                            form->b_type, form->accumulator, Adder::warpgroup);
  builder.CreateStore(result, slot);
  Value* next = builder.CreateAdd(index, builder.getInt32(1));
  index->addIncoming(next, builder.GetInsertBlock());
  builder.CreateCondBr(builder.CreateICmpULT(next, builder.getInt32(accumulators)), body, done);
  builder.SetInsertPoint(done);

  for (size_t destination = 0; destination < destinations.size(); ++destination) {
    Value* word = builder.getInt32(0);
    for (uint32_t part = 0; part < per_register; ++part) {
      Value* element = builder.CreateLoad(accumulator_type, array_element(builder, accumulated, builder.getInt32(static_cast<uint32_t>(destination) * per_register + part)));
      word = builder.CreateOr(word, builder.CreateShl(builder.CreateZExt(element, builder.getInt32Ty()), part * accumulator_bits));
    }
    lowering.write(*destinations[destination], word, ScalarType::b32);
  }
}

void lower_wgmma(FunctionLowering& lowering, const Instruction& instruction) {
  size_t operands = instruction.operands.size();
  if (has_word(instruction, "mma_async")) lower_mma_async(lowering, instruction);
  else if (has_word(instruction, "fence") || has_word(instruction, "commit_group")) {
    if (operands != 0) lowering.error(instruction.location, "wgmma." + std::string(has_word(instruction, "fence") ? "fence" : "commit_group") + " takes no operands");
  } else if (has_word(instruction, "wait_group")) {
    if (operands != 1 || instruction.operands[0].kind != Operand::Kind::integer)
      lowering.error(instruction.location, "wgmma.wait_group takes an immediate count");
  } else {
    lowering.error(instruction.location, "wgmma needs .mma_async, .fence, .commit_group or .wait_group");
  }
}

}  // namespace

void add_warpgroup_matrix_lowerings(LoweringTable& table) { table["wgmma"] = lower_wgmma; }

}  // namespace xcuda::ptx
