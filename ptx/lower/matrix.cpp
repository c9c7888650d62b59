// Warp-level matrix instructions: mma.sync, wmma, ldmatrix and stmatrix. Each lane holds
// fragments of the matrices in the places the PTX ISA's fragment layout tables give, and what a
// lane gets depends on other lanes' registers. So every lane offers its fragment registers at
// warp exchanges (see intrinsics.h), copies the whole warp's fragments into per-thread matrices
// laid out row by row, and then computes or picks its own elements from them.
// The fragment layouts and the model of a tensor core's sums are in tensor_core.h, which
// warpgroup_matrix.cpp shares.
#include <array>
#include <functional>
#include <optional>
#include <span>

#include "lower/compiler_loops.h"
#include "lower/floating_point.h"
#include "lower/instruction_lowering.h"
#include "lower/module_lowering.h"
#include "lower/tensor_core.h"

namespace xcuda::ptx {
namespace {

using llvm::Value;
using namespace tensor_core;

struct FragmentLayout {
  Layout layout;
  uint32_t elements;  // per lane
};

// The accumulators of every shape but m8n8k4 .f16 lie in pairs along a row: rows g and g+8
// (m16n8) or g alone (m8n8, two elements), so each lane's C is its D and needs no exchange.
struct MmaForm {
  uint32_t m, n, k;  // A is m × k, C and D m × n, B k × n (k × 4n for quad pairs)
  Element input, accumulator;
  FragmentLayout a, b;
  uint32_t accumulators;  // per lane
  bool quad_pairs = false;

  uint32_t b_columns() const { return quad_pairs ? 4 * n : n; }
  Layout accumulator_layout(Element type) const {
    return !quad_pairs ? c_pairs : type == Element::f16 ? c_quad_pair_f16 : c_quad_pair_f32;
  }
};

// The name of the module's function for what follows the exchange of an instruction of this
// form (FunctionLowering::call_helper): its opcode and modifiers, as written.
std::string form_name(const Instruction& instruction) {
  std::string name = "xcuda." + instruction.opcode;
  for (const Modifier& modifier : instruction.modifiers) name += "." + modifier.word;
  return name;
}

// The shapes and types of mma.sync the ISA defines for sm_70 to sm_90 (FP8 from sm_89) but the
// sub-byte types. FP8 fragments lie as .s8/.u8 ones do. Only m8n8k4 .f16 takes A and B in either
// layout; the others take .row.col alone.
std::optional<MmaForm> find_form(std::string_view shape, Element input, Element accumulator, bool a_row, bool b_column) {
  if (input == Element::f16 && (accumulator == Element::f16 || accumulator == Element::f32) && shape == "m8n8k4")
    return MmaForm{32, 8, 4, input, accumulator, {a_row ? a_quad_pair_row : a_quad_pair_column, 4},
                   {b_column ? b_quad_pair_column : b_quad_pair_row, 4}, 8, true};
  if (!a_row || !b_column) return std::nullopt;
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
    if (shape == "m8n8k4") return MmaForm{8, 8, 4, input, accumulator, {a_m8n8<1>, 1}, {b_m8n8<1>, 1}, 2};
    for (uint32_t k : {4u, 8u, 16u})
      if (shape == "m16n8k" + std::to_string(k))
        return MmaForm{16, 8, k, input, accumulator, {a_32bit, k / 2}, {b_32bit, k / 4}, 4};
  }
  if (byte && (is_byte(input) ? accumulator == Element::s32 : float_accumulator)) {
    if (shape == "m8n8k16" && is_byte(input)) return MmaForm{8, 8, 16, input, accumulator, {a_m8n8<4>, 4}, {b_m8n8<4>, 4}, 2};
    if (shape == "m16n8k16" || shape == "m16n8k32") {
      uint32_t k = shape == "m16n8k16" ? 16 : 32;
      return MmaForm{16, 8, k, input, accumulator, {a_packed<4>, k / 2}, {b_packed<4>, k / 4}, 4};
    }
  }
  if ((input == Element::s4 || input == Element::u4) && accumulator == Element::s32) {
    if (shape == "m8n8k32") return MmaForm{8, 8, 32, input, accumulator, {a_m8n8<8>, 8}, {b_m8n8<8>, 8}, 2};
    if (shape == "m16n8k32" || shape == "m16n8k64") {
      uint32_t k = shape == "m16n8k32" ? 32 : 64;
      return MmaForm{16, 8, k, input, accumulator, {a_packed<8>, k / 2}, {b_packed<8>, k / 4}, 4};
    }
  }
  if (input == Element::b1 && accumulator == Element::s32) {
    if (shape == "m8n8k128") return MmaForm{8, 8, 128, input, accumulator, {a_m8n8<32>, 32}, {b_m8n8<32>, 32}, 2};
    if (shape == "m16n8k128" || shape == "m16n8k256") {
      uint32_t k = shape == "m16n8k128" ? 128 : 256;
      return MmaForm{16, 8, k, input, accumulator, {a_packed<32>, k / 2}, {b_packed<32>, k / 4}, 4};
    }
  }
  return std::nullopt;
}

// mma.sp: A is m × k with half of each row zero, in chunks along the row (PTX ISA 9.0, "Sparse
// matrix storage"): of 4 .f16/.bf16 or 8-bit elements 2 are kept, of 2 .tf32 1, of 8 .s4/.u4
// two pairs. Each lane holds its share of the kept m × k/2 elements as mma.sync holds a dense A of
// k/2 columns; B, C and D lie as in the dense shape of k.
std::optional<MmaForm> find_sparse_form(std::string_view shape, Element input, Element accumulator, bool a_row, bool b_column) {
  if (!a_row || !b_column) return std::nullopt;
  bool half = input == Element::f16 || input == Element::bf16;
  bool float_accumulator = accumulator == Element::f32 || (accumulator == Element::f16 && input == Element::f16);
  auto form = [&](uint32_t k, Layout a, Layout b) { return MmaForm{16, 8, k, input, accumulator, {a, k / 4}, {b, k / 4}, 4}; };
  if (half && float_accumulator && (shape == "m16n8k16" || shape == "m16n8k32")) return form(shape == "m16n8k16" ? 16 : 32, a_16bit, b_16bit);
  if (input == Element::tf32 && accumulator == Element::f32 && (shape == "m16n8k8" || shape == "m16n8k16"))
    return form(shape == "m16n8k8" ? 8 : 16, a_32bit, b_32bit);
  if (is_byte(input) && accumulator == Element::s32 && (shape == "m16n8k32" || shape == "m16n8k64"))
    return form(shape == "m16n8k32" ? 32 : 64, a_packed<4>, b_packed<4>);
  if (is_eight_bit_float(input) && accumulator == Element::f32 && shape == "m16n8k64") return form(64, a_packed<4>, b_packed<4>);
  if ((input == Element::s4 || input == Element::u4) && accumulator == Element::s32 && (shape == "m16n8k64" || shape == "m16n8k128"))
    return form(shape == "m16n8k64" ? 64 : 128, a_packed<8>, b_packed<8>);
  return std::nullopt;
}

// How mma.sp's metadata places A's kept elements. Each 4 bits of metadata describe one chunk of
// a row as two 2-bit indices, the lower first, of the kept units among the chunk's four: an
// element (.f16, .bf16, 8-bit), a pair of elements (.s4/.u4) or half of one (.tf32, whose two
// indices name its halves: 0b0100 the first element, 0b1110 the second). A group of four lanes
// holds rows g and g+8 of A; of its lanes, one, two or all four give their metadata registers,
// the selector says which, each eight chunks: for .f16, .bf16 and .tf32 four of row g (low 16
// bits) and the same four of row g+8 (high), for 8-bit and 4-bit elements eight of one row, row g
// in a lane and row g+8 in the next (PTX ISA 9.0, "Sparse matrix storage"; the byte forms' layout
// as an H100 reads it, which differs from the ISA's figures).
struct SparseMetadata {
  uint32_t element_bits, k;
  // Elements of a chunk, and of them those kept.
  uint32_t chunk_elements() const { return element_bits == 32 ? 2 : element_bits == 4 ? 8 : 4; }
  uint32_t kept_per_chunk() const { return chunk_elements() / 2; }
  uint32_t lanes_per_group() const { return k / chunk_elements() / 4; }
  uint32_t selectors() const { return 4 / lanes_per_group(); }
};

// The 4 bits of metadata for chunk `chunk` of the dense row `row` of A, read from the warp's
// metadata registers (a per-thread copy, lane by lane).
Value* chunk_metadata(llvm::IRBuilder<>& builder, const SparseMetadata& sparse, llvm::AllocaInst* metadata, uint32_t selector, Value* row,
                      Value* chunk) {
  Value* upper_row = builder.CreateLShr(row, 3);
  Value *lane_in_selection, *bit;
  if (sparse.element_bits >= 16) {
    lane_in_selection = builder.CreateLShr(chunk, 2);
    bit = builder.CreateAdd(builder.CreateMul(upper_row, builder.getInt32(16)), builder.CreateMul(builder.CreateAnd(chunk, 3), builder.getInt32(4)));
  } else {
    lane_in_selection = builder.CreateAdd(upper_row, builder.CreateMul(builder.CreateLShr(chunk, 3), builder.getInt32(2)));
    bit = builder.CreateMul(builder.CreateAnd(chunk, 7), builder.getInt32(4));
  }
  Value* lane = builder.CreateAdd(builder.CreateMul(builder.CreateAnd(row, 7), builder.getInt32(4)),
                                  builder.CreateAdd(builder.getInt32(selector * sparse.lanes_per_group()), lane_in_selection));
  Value* word = builder.CreateLoad(builder.getInt32Ty(), array_element(builder, metadata, lane));
  return builder.CreateAnd(builder.CreateLShr(word, bit), 15);
}

// The element of B (k × n, row-major) that A's kept element `kept` (< k/2) of the dense row `row`
// meets in column `column`. Each index of the metadata names a unit of the chunk's four: the
// element, of 4-bit elements the pair, of .tf32 a 16-bit half, so a .tf32 element of B is made
// of the two halves its indices name (0b0100 its first element, 0b1110 its second; an H100 makes
// it so of any other bits too).
Value* sparse_b_element(llvm::IRBuilder<>& builder, const SparseMetadata& sparse, llvm::AllocaInst* metadata, uint32_t selector,
                        llvm::AllocaInst* b_matrix, uint32_t n, Value* row, Value* kept, Value* column) {
  Value* chunk = builder.CreateUDiv(kept, builder.getInt32(sparse.kept_per_chunk()));
  Value* slot = builder.CreateURem(kept, builder.getInt32(sparse.kept_per_chunk()));
  Value* nibble = chunk_metadata(builder, sparse, metadata, selector, row, chunk);
  auto index = [&](Value* which) { return builder.CreateAnd(builder.CreateLShr(nibble, builder.CreateMul(which, builder.getInt32(2))), 3); };
  llvm::Type* element = builder.getIntNTy(sparse.element_bits);
  auto b_at = [&](Value* column_of_chunk) {
    Value* b_row = builder.CreateAdd(builder.CreateMul(chunk, builder.getInt32(sparse.chunk_elements())), column_of_chunk);
    return builder.CreateLoad(element, array_element(builder, b_matrix, builder.CreateAdd(builder.CreateMul(b_row, builder.getInt32(n)), column)));
  };
  if (sparse.element_bits == 32) {
    auto half = [&](Value* unit) {
      Value* whole = b_at(builder.CreateLShr(unit, 1));
      return builder.CreateAnd(builder.CreateLShr(whole, builder.CreateMul(builder.CreateAnd(unit, 1), builder.getInt32(16))), 0xFFFF);
    };
    return builder.CreateOr(half(index(builder.getInt32(0))), builder.CreateShl(half(index(builder.getInt32(1))), 16));
  }
  if (sparse.element_bits == 4)
    return b_at(builder.CreateAdd(builder.CreateMul(index(builder.CreateLShr(slot, 1)), builder.getInt32(2)), builder.CreateAnd(slot, 1)));
  return b_at(index(slot));
}

// The places in the gathered matrices where the row of A (m × k, row-major) and the column of B
// (k × n, row-major) that one element of D is the dot product of begin.
std::pair<Value*, Value*> dot_rows(FunctionLowering& lowering, llvm::AllocaInst* a_matrix, llvm::AllocaInst* b_matrix, Value* row,
                                   Value* column, uint32_t k) {
  auto& builder = lowering.builder();
  return {array_element(builder, a_matrix, builder.CreateMul(row, builder.getInt32(k))), array_element(builder, b_matrix, column)};
}

// How a matrix's elements pack into a lane's registers: .f64 one to a 64-bit register, the
// others as many as fit a 32-bit one, numbered from the lowest bits of the first register.
struct RegisterPacking {
  explicit RegisterPacking(Element type) : bits(element_bits(type)), register_bits(bits == 64 ? 64 : 32), per_register(register_bits / bits) {}
  ScalarType register_type() const { return register_bits == 64 ? ScalarType::b64 : ScalarType::b32; }
  // Element `index` of the lane's, from the register that holds it.
  Value* element(llvm::IRBuilder<>& builder, Value* word, uint32_t index) const {
    return builder.CreateTrunc(builder.CreateLShr(word, (index % per_register) * bits), builder.getIntNTy(bits));
  }
  // Register `index` of the lane's; where there are more registers than elements, the elements
  // repeat.
  Value* word(llvm::IRBuilder<>& builder, const std::vector<Value*>& elements, uint32_t index) const {
    Value* word = builder.getIntN(register_bits, 0);
    for (uint32_t part = 0; part < per_register; ++part) {
      Value* element = builder.CreateZExt(elements[(index * per_register + part) % elements.size()], word->getType());
      word = builder.CreateOr(word, builder.CreateShl(element, part * bits));
    }
    return word;
  }
  uint32_t bits, register_bits, per_register;
};

// .b1 inputs count bits: .popc, with .and or .xor to say which.
bool counts_bits(const Instruction& instruction) {
  return has_word(instruction, "popc") && (has_word(instruction, "and") || has_word(instruction, "xor"));
}

// call_dot, where C may be of another type than D (.f16 A and B: .f16 and .f32). An H100 then
// sums as into an .f32 D: an .f16 C widened, exactly, and an .f16 D rounded to nearest from the
// .f32 sum (recorded: tests/cuda/half_accumulators.cu).
Value* call_dot_between(FunctionLowering& lowering, DotForm dot, Value* a, Value* b, Value* c, Element c_type) {
  if (c_type == dot.accumulator) return call_dot(lowering, dot, a, b, c);
  auto& builder = lowering.builder();
  const Element d_type = dot.accumulator;
  dot.accumulator = Element::f32;
  if (c_type == Element::f16)
    c = builder.CreateBitCast(builder.CreateFPExt(builder.CreateBitCast(c, builder.getHalfTy()), builder.getFloatTy()), builder.getInt32Ty());
  Value* d = call_dot(lowering, dot, a, b, c);
  if (d_type == Element::f16) d = round_to_narrow(lowering, builder.CreateBitCast(d, builder.getFloatTy()), f16_format, NarrowRounding{});
  return d;
}

// mma.sp's D: for each of the lane's elements, C plus the dot product of A's kept elements in
// its row with the rows of B that the metadata names, which a tensor core sums as a dense
// product of k/2 terms.
std::vector<Value*> sparse_products(FunctionLowering& lowering, const MmaForm& form, const SparseMetadata& sparse, uint32_t selector,
                                    const std::vector<llvm::AllocaInst*>& matrices, DotForm dot, Layout d_layout,
                                    const std::function<Value*(uint32_t index)>& c_of) {
  auto& builder = lowering.builder();
  auto [first_row, first_column] = first_position(lowering, d_layout, lane_id(lowering));
  const uint32_t kept = form.k / 2;
  llvm::Type* element = builder.getIntNTy(element_bits(form.input));
  // Per row of the lane's: B's rows for its kept elements, in the lane's columns.
  std::vector<std::pair<uint32_t, llvm::AllocaInst*>> gathered;
  auto gathered_for = [&](uint32_t row_offset, Value* row) {
    for (auto& [offset, rows] : gathered)
      if (offset == row_offset) return rows;
    llvm::AllocaInst* rows = thread_array(builder, element, kept * form.n);
    counted_loop(builder, builder.getInt32(kept), [&](Value* index) {
      // A lane's elements of D lie in two columns of a row (c_pairs).
      for (uint32_t column = 0; column < 2; ++column) {
        Value* lane_column = builder.CreateAdd(first_column, builder.getInt32(column));
        Value* value = sparse_b_element(builder, sparse, matrices[2], selector, matrices[1], form.n, row, index, lane_column);
        builder.CreateStore(value, array_element(builder, rows, builder.CreateAdd(builder.CreateMul(index, builder.getInt32(form.n)), lane_column)));
      }
    });
    gathered.emplace_back(row_offset, rows);
    return rows;
  };
  std::vector<Value*> results;
  for (uint32_t index = 0; index < form.accumulators; ++index) {
    Position offset = d_layout(0, index);
    Value* row = builder.CreateAdd(first_row, builder.getInt32(offset.row));
    Value* column = builder.CreateAdd(first_column, builder.getInt32(offset.column));
    llvm::AllocaInst* rows = gathered_for(offset.row, row);
    Value* a = array_element(builder, matrices[0], builder.CreateMul(row, builder.getInt32(kept)));
    results.push_back(call_dot_between(lowering, dot, a, array_element(builder, rows, column), c_of(index), form.accumulator));
  }
  return results;
}

// mma{.sp}.sync.aligned.shape.alayout.blayout[.satfinite].dtype.atype.btype.ctype d, a, b, c; and
// with .sp (or .sp::ordered_metadata, the same where the indices of each chunk come in order),
// e, f: A's kept elements, their metadata e and the selector f of the lanes whose e counts.
void lower_mma(FunctionLowering& lowering, const Instruction& instruction) {
  const bool sparse = has_word(instruction, "sp") || has_word(instruction, "sp::ordered_metadata");
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
  bool mixable = types.size() == 4 && ((is_integer(types[1]) && is_integer(types[2]) && element_bits(types[1]) == element_bits(types[2])) ||
                                        (is_eight_bit_float(types[1]) && is_eight_bit_float(types[2])));
  if (operands.size() != (sparse ? 6u : 4u) || types.size() != 4 || (types[1] != types[2] && !mixable)) {
    lowering.error(instruction.location, sparse ? "mma.sp needs d, a, b, c, e and f and the four types .dtype.atype.btype.ctype"
                                                : "mma needs d, a, b and c and the four types .dtype.atype.btype.ctype");
    return;
  }
  // What ptxas takes: .f32 D from .f16 C in m8n8k4, and otherwise D and C of one type.
  const Element d_type = types[0], c_type = types[3];
  if (d_type != c_type && (shape != "m8n8k4" || d_type != Element::f32 || c_type != Element::f16)) {
    lowering.error(instruction.location, "mma." + std::string(shape) + " needs .dtype and .ctype alike (but m8n8k4's .f32 D from .f16 C)");
    return;
  }
  // .alayout then .blayout, as written.
  std::vector<std::string_view> layouts;
  for (const Modifier& modifier : instruction.modifiers)
    if (modifier.word == "row" || modifier.word == "col") layouts.push_back(modifier.word);
  if (layouts.size() != 2) {
    lowering.error(instruction.location, "mma needs .alayout and .blayout: .row or .col each");
    return;
  }
  if (types[1] == Element::b1 && !counts_bits(instruction)) {
    lowering.error(instruction.location, "mma with .b1 inputs needs .and.popc or .xor.popc");
    return;
  }
  std::optional<MmaForm> form = sparse ? find_sparse_form(shape, types[1], d_type, layouts[0] == "row", layouts[1] == "col")
                                        : find_form(shape, types[1], d_type, layouts[0] == "row", layouts[1] == "col");
  if (!form) {
    lowering.error(instruction.location, std::string(sparse ? "mma.sp." : "mma.") + std::string(shape) + "." + std::string(layouts[0]) +
                                             "." + std::string(layouts[1]) + " with these types is not supported yet");
    return;
  }
  const SparseMetadata metadata{element_bits(form->input), form->k};
  uint32_t selector = 0;
  if (sparse) {
    const Operand& written = operands[5];
    // ptxas takes 0-3 in m16n8k32 with .f16 inputs and an .f32 D, where the ISA has 0-1; an H100
    // stops 2 and 3 as illegal instructions.
    const bool quirk = form->input == Element::f16 && form->accumulator == Element::f32 && form->k == 32;
    const uint32_t written_selectors = quirk ? 4 : metadata.selectors();
    if (written.kind != Operand::Kind::integer || written.integer >= written_selectors) {
      lowering.error(written.location, "mma.sp." + std::string(shape) + "'s sparsity selector is a constant from 0 to " +
                                           std::to_string(written_selectors - 1));
      return;
    }
    selector = static_cast<uint32_t>(written.integer);
    if (selector >= metadata.selectors()) {
      emit_trap(lowering, intrinsics::illegal_instruction);
      lowering.continue_after_terminator();
      return;
    }
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
  const RegisterPacking c_packing(c_type), d_packing(d_type);
  std::vector<Value*> c_registers = read_registers(lowering, operands[3], c_packing.register_bits);
  auto destinations = elements_of(operands[0]);
  if (c_registers.size() != form->accumulators / c_packing.per_register || destinations.size() != form->accumulators / d_packing.per_register) {
    lowering.error(instruction.location, "mma." + std::string(shape) + " needs " + std::to_string(form->accumulators / c_packing.per_register) +
                                             " C and " + std::to_string(form->accumulators / d_packing.per_register) + " D registers");
    return;
  }
  // C passes between lanes where its layout is not D's (m8n8k4: .f16 C, .f32 D).
  const Layout c_layout = form->accumulator_layout(c_type), d_layout = form->accumulator_layout(d_type);
  std::vector<Fragment> fragments{{a_registers, input_bits, form->a.layout, form->m, sparse ? form->k / 2 : form->k},
                                  {b_registers, input_bits, form->b.layout, form->k, form->b_columns()}};
  if (c_layout != d_layout) fragments.push_back({c_registers, c_packing.bits, c_layout, form->m, form->n});
  // Every lane's metadata, lane by lane: the selector's lanes are known only here.
  if (sparse)
    fragments.push_back({{lowering.read(operands[4], ScalarType::b32)}, 32, [](uint32_t lane, uint32_t) { return Position{lane, 0}; },
                         warp_size, 1});
  offer_fragments(lowering, fragments);
  // What follows the exchange is the same at every mma.sync of the form: one function of the
  // module's, (context, C's registers) -> D's registers, that each calls. Written out at each,
  // it was most of the code of a tensor-core kernel (256 mma.sync in a cutlass kernel of
  // libcublas: 71,000 instructions after optimisation).
  auto* registers_type = llvm::ArrayType::get(builder.getIntNTy(d_packing.register_bits), destinations.size());
  std::string helper_name = form_name(instruction) + (sparse ? ".selector" + std::to_string(selector) : "");
  Value* d_registers = lowering.call_helper(helper_name, registers_type, c_registers, [&](llvm::Function& helper) {
    std::vector<llvm::AllocaInst*> matrices = place_fragments(lowering, fragments);
    auto c_of = [&](uint32_t index) { return c_packing.element(builder, helper.getArg(1 + index / c_packing.per_register), index); };
    std::vector<Value*> results;
    if (sparse) {
      DotForm dot{types[1], types[2], form->accumulator, form->k / 2, form->n, form->k / 2, has_word(instruction, "satfinite")};
      results = sparse_products(lowering, *form, metadata, selector, matrices, dot, d_layout, c_of);
    } else {
      auto [first_row, first_column] = first_position(lowering, d_layout, lane_id(lowering));
      DotForm dot{types[1], types[2], form->accumulator, form->k, form->b_columns(), form->k, has_word(instruction, "satfinite"),
                  has_word(instruction, "xor")};
      for (uint32_t index = 0; index < form->accumulators; ++index) {
        Value* row = builder.CreateAdd(first_row, builder.getInt32(d_layout(0, index).row));
        Value* column = builder.CreateAdd(first_column, builder.getInt32(d_layout(0, index).column));
        // A quad pair's B columns begin at 8q, as its rows do.
        Value* b_column = form->quad_pairs ? builder.CreateAdd(column, builder.CreateAnd(row, ~7u)) : column;
        auto [a, b] = dot_rows(lowering, matrices[0], matrices[1], row, b_column, form->k);
        Value* c = c_layout != d_layout
                       ? builder.CreateLoad(builder.getIntNTy(c_packing.bits),
                                            array_element(builder, matrices[2], builder.CreateAdd(builder.CreateMul(row, builder.getInt32(form->n)), column)))
                       : c_of(index);
        results.push_back(form->quad_pairs ? quad_pair_dot(lowering, DotTerms{a, b, form->b_columns()}, c, c_type, d_type)
                                           : call_dot_between(lowering, dot, a, b, c, c_type));
      }
    }
    Value* packed = llvm::PoisonValue::get(registers_type);
    for (uint32_t destination = 0; destination < destinations.size(); ++destination)
      packed = builder.CreateInsertValue(packed, d_packing.word(builder, results, destination), destination);
    return packed;
  });
  for (uint32_t destination = 0; destination < destinations.size(); ++destination)
    lowering.write(*destinations[destination], builder.CreateExtractValue(d_registers, destination),
                   d_packing.register_type());
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
  RegisterPacking packing() const { return RegisterPacking(element); }
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
      {"m16n16k8", {16, 16, 8}},   {"m8n8k4", {8, 8, 4}},     {"m8n8k32", {8, 8, 32}}, {"m8n8k128", {8, 8, 128}},
  };
  for (const auto& [name, shape] : shapes)
    if (has_word(instruction, name)) return shape;
  lowering.error(instruction.location, "wmma needs a shape: .m16n16k16, .m32n8k16, .m8n32k16, .m16n16k8, .m8n8k4, .m8n8k32 or .m8n8k128");
  return std::nullopt;
}

// The fragment's registers, checked to hold `matrix`'s share of each lane.
std::optional<std::vector<const Operand*>> fragment_registers(FunctionLowering& lowering, const Instruction& instruction,
                                                              const Operand& operand, const WmmaMatrix& matrix) {
  auto registers = elements_of(operand);
  size_t slots = registers.size() * matrix.packing().per_register;
  if (slots < matrix.per_lane() || slots % matrix.per_lane() != 0) {
    lowering.error(operand.location, "this wmma fragment needs " +
                                         std::to_string(matrix.per_lane() / matrix.packing().per_register) + " registers");
    return std::nullopt;
  }
  return registers;
}

// The lane's elements of `matrix` as the registers hold them; slots beyond the lane's share
// repeat it.
void write_fragment(FunctionLowering& lowering, const std::vector<const Operand*>& registers, const WmmaMatrix& matrix,
                    const std::vector<Value*>& elements) {
  const RegisterPacking packing = matrix.packing();
  for (size_t index = 0; index < registers.size(); ++index)
    lowering.write(*registers[index], packing.word(lowering.builder(), elements, index), packing.register_type());
}

std::vector<Value*> read_fragment(FunctionLowering& lowering, const std::vector<const Operand*>& registers, const WmmaMatrix& matrix) {
  const RegisterPacking packing = matrix.packing();
  std::vector<Value*> elements;
  for (uint32_t index = 0; index < matrix.per_lane(); ++index)
    elements.push_back(packing.element(lowering.builder(), lowering.read(*registers[index / packing.per_register], packing.register_type()), index));
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
  if (!load && bits < 8) {
    lowering.error(instruction.location, "wmma.store stores .s32, .f32, .f16 or .f64 elements");
    return;
  }
  std::vector<Value*> stored = load ? std::vector<Value*>{} : read_fragment(lowering, *registers, matrix);
  std::vector<Value*> loaded;
  for (uint32_t index = 0; index < matrix.per_lane(); ++index) {
    auto [row, column] = element_position(lowering, matrix, index);
    Value* offset = row_major ? builder.CreateAdd(builder.CreateMul(row, stride), column)
                              : builder.CreateAdd(builder.CreateMul(column, stride), row);
    // Sub-byte elements (.s4, .u4, .b1) pack into bytes from the lowest bits.
    Value* bit_offset = builder.CreateMul(builder.CreateZExt(offset, builder.getInt64Ty()), builder.getInt64(bits));
    Value* pointer = builder.CreateGEP(builder.getInt8Ty(), base, builder.CreateLShr(bit_offset, 3));
    if (!load) {
      builder.CreateAlignedStore(stored[index], pointer, llvm::Align(bits / 8));
    } else if (bits < 8) {
      Value* byte = builder.CreateLoad(builder.getInt8Ty(), pointer);
      Value* shift = builder.CreateTrunc(builder.CreateAnd(bit_offset, 7), builder.getInt8Ty());
      loaded.push_back(builder.CreateTrunc(builder.CreateLShr(byte, shift), builder.getIntNTy(bits)));
    } else {
      loaded.push_back(builder.CreateAlignedLoad(builder.getIntNTy(bits), pointer, llvm::Align(bits / 8)));
    }
  }
  if (load) write_fragment(lowering, *registers, matrix, loaded);
}

// wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype d, a, b, c (.f16 A and B) or
// .dtype.atype.btype.ctype, with .satfinite for integers. The fragments hold their matrices
// whatever layout they were loaded from, so .alayout and .blayout change nothing.
void lower_wmma_mma(FunctionLowering& lowering, const Instruction& instruction) {
  std::optional<WmmaShape> shape = wmma_shape(lowering, instruction);
  if (!shape) return;
  std::vector<Element> types = written_elements(instruction);
  if (types.size() == 2) types = {types[0], Element::f16, Element::f16, types[1]};
  const auto& operands = instruction.operands;
  if (types.size() != 4 || operands.size() != 4) {
    lowering.error(instruction.location, "wmma.mma needs d, a, b, c and the types .dtype.ctype or .dtype.atype.btype.ctype");
    return;
  }
  Element input = types[1];
  if (types[0] != types[3] && input != Element::f16) {
    lowering.error(instruction.location, "wmma.mma needs .dtype and .ctype alike but for .f16 A and B");
    return;
  }
  auto half_or_single = [](Element type) { return type == Element::f16 || type == Element::f32; };
  bool known = (input == Element::f16 && half_or_single(types[0]) && half_or_single(types[3]) && shape->k == 16) ||
               (input == Element::bf16 && types[0] == Element::f32 && shape->k == 16) ||
               (input == Element::tf32 && types[0] == Element::f32 && shape->k == 8) ||
               (is_byte(input) && is_byte(types[2]) && types[0] == Element::s32 && shape->k == 16) ||
               ((input == Element::s4 || input == Element::u4) && types[0] == Element::s32 && shape->k == 32) ||
               (input == Element::b1 && types[0] == Element::s32 && shape->k == 128 && counts_bits(instruction)) ||
               (input == Element::f64 && types[0] == Element::f64 && shape->k == 4);
  if (!known || (types[1] != types[2] && !is_byte(input))) {
    lowering.error(instruction.location, "wmma.mma with these shape and types is not supported yet");
    return;
  }
  WmmaMatrix a_matrix{shape->m, shape->k, types[1]}, b_matrix{shape->k, shape->n, types[2]}, c_matrix{shape->m, shape->n, types[3]},
      d_matrix{shape->m, shape->n, types[0]};
  auto d_registers = fragment_registers(lowering, instruction, operands[0], d_matrix);
  auto a_registers = fragment_registers(lowering, instruction, operands[1], a_matrix);
  auto b_registers = fragment_registers(lowering, instruction, operands[2], b_matrix);
  auto c_registers = fragment_registers(lowering, instruction, operands[3], c_matrix);
  if (!d_registers || !a_registers || !b_registers || !c_registers) return;
  // Only the registers that hold each lane's share take part in the exchange.
  auto share = [&](const std::vector<const Operand*>& registers, const WmmaMatrix& matrix) {
    std::vector<Value*> values;
    for (uint32_t index = 0; index < matrix.per_lane() / matrix.packing().per_register; ++index)
      values.push_back(lowering.read(*registers[index], matrix.packing().register_type()));
    return values;
  };
  auto a_place = [&](uint32_t lane, uint32_t index) { return a_matrix.position(lane, index); };
  auto b_place = [&](uint32_t lane, uint32_t index) { return b_matrix.position(lane, index); };
  const Fragment fragments[] = {{share(*a_registers, a_matrix), element_bits(a_matrix.element), a_place, a_matrix.rows, a_matrix.columns},
                                {share(*b_registers, b_matrix), element_bits(b_matrix.element), b_place, b_matrix.rows, b_matrix.columns}};
  std::vector<llvm::AllocaInst*> matrices = gather(lowering, fragments);
  llvm::AllocaInst* a_all = matrices[0];
  llvm::AllocaInst* b_all = matrices[1];
  std::vector<Value*> c = read_fragment(lowering, *c_registers, c_matrix);
  // The H200 computes .tf32 m16n16k8 as two steps of k = 4, the first's sum truncated to .f32 as
  // an mma.sync's would be (fitted to the conformance recordings).
  DotForm dot{types[1], types[2], types[0], shape->k, shape->n, input == Element::tf32 ? 4 : shape->k, has_word(instruction, "satfinite"),
              has_word(instruction, "xor")};
  std::vector<Value*> results;
  for (uint32_t index = 0; index < c_matrix.per_lane(); ++index) {
    auto [row, column] = element_position(lowering, c_matrix, index);
    auto [a, b] = dot_rows(lowering, a_all, b_all, row, column, shape->k);
    results.push_back(call_dot_between(lowering, dot, a, b, c[index], types[3]));
  }
  write_fragment(lowering, *d_registers, d_matrix, results);
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

// What is wrong with one of sm_100's 8-bit forms, as ptxas sees it; nothing for a well-formed one.
// The checker admits no other shapes: ldmatrix .m16n16 and .m8n16, stmatrix .m16n8.
std::optional<std::string> eight_bit_form_problem(const Instruction& instruction, std::string_view shape, uint32_t count) {
  const bool load = instruction.opcode == "ldmatrix", transposed = has_word(instruction, "trans");
  const bool plain_bytes = instruction.qualifiers.types.size() == 1 && instruction.qualifiers.types[0] == ScalarType::b8;
  const bool unpacked = instruction.qualifiers.types.empty() && has_word(instruction, "b8x16") &&
                        (has_word(instruction, "b6x16_p32") || has_word(instruction, "b4x16_p64"));
  const std::string form = instruction.opcode + "." + std::string(shape);
  if (load && shape == "m16n16") {
    if (!transposed) return form + " needs .trans";
    if (count == 4) return form + " takes .x1 or .x2";
    if (!plain_bytes && !unpacked) return form + " takes .b8, or .b8x16 with .b6x16_p32 or .b4x16_p64";
  } else if (load) {
    if (transposed) return form + " takes no .trans";
    if (!unpacked) return form + " takes .b8x16 with .b6x16_p32 or .b4x16_p64";
  } else {
    if (!transposed) return form + " needs .trans";
    if (!plain_bytes) return form + " takes .b8";
  }
  return std::nullopt;
}

// The .m8n8 forms, and sm_100's 8-bit ones checked as ptxas checks them: ldmatrix .m16n16 (.trans,
// .x1 or .x2; .b8, or .b8x16 unpacked from .b6x16_p32 or .b4x16_p64 data) and .m8n16 (no .trans;
// .b8x16 unpacked), stmatrix .m16n8 (.trans, .b8). The ISA gives the 8-bit forms' register
// layouts only as figures, and no sm_100 GPU was at hand to record them: not supported yet.
std::optional<MatrixAccess> matrix_access(FunctionLowering& lowering, const Instruction& instruction) {
  uint32_t count = has_word(instruction, "x4") ? 4 : has_word(instruction, "x2") ? 2 : has_word(instruction, "x1") ? 1 : 0;
  std::string_view shape;
  for (std::string_view word : {"m8n8", "m16n16", "m8n16", "m16n8"})
    if (has_word(instruction, word)) shape = word;
  if (count == 0 || shape.empty()) {
    lowering.error(instruction.location, instruction.opcode + " needs a shape such as .m8n8 and .x1, .x2 or .x4");
    return std::nullopt;
  }
  if (shape != "m8n8") {
    std::optional<std::string> problem = eight_bit_form_problem(instruction, shape, count);
    lowering.error(instruction.location, problem ? *problem : "'" + instruction.opcode + "." + std::string(shape) + "' is not supported yet");
    return std::nullopt;
  }
  const auto& types = instruction.qualifiers.types;
  if (types.size() != 1 || bit_width(types[0]) != 16) {
    lowering.error(instruction.location, instruction.opcode + ".m8n8 takes .b16");
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
  llvm::AllocaInst* nothing = thread_array(builder, builder.getInt64Ty(), 2);
  builder.CreateStore(llvm::ConstantAggregateZero::get(nothing->getAllocatedType()), nothing);
  Value* pointer = builder.CreateSelect(addresses_row(lowering, lane, access->count),
                                        lowering.address(instruction.operands[1], instruction.qualifiers.space), nothing);
  std::vector<Value*> row_halves{builder.CreateAlignedLoad(builder.getInt64Ty(), pointer, llvm::Align(16)),
                                 builder.CreateAlignedLoad(builder.getInt64Ty(), builder.CreateConstGEP1_64(builder.getInt8Ty(), pointer, 8), llvm::Align(8))};
  // Lane r of the 8·count addressing lanes holds row r of the stacked matrices.
  auto row_layout = [](uint32_t addressing_lane, uint32_t index) { return Position{addressing_lane, index}; };
  const Fragment rows{row_halves, 16, row_layout, warp_size, 8};
  offer_fragments(lowering, std::span(&rows, 1));
  // What follows the exchange, as for mma.sync (lower_mma): one function per form.
  auto* registers_type = llvm::ArrayType::get(builder.getInt32Ty(), access->count);
  Value* registers = lowering.call_helper(form_name(instruction), registers_type, {}, [&](llvm::Function&) {
    llvm::AllocaInst* matrices = place_fragments(lowering, std::span(&rows, 1)).front();
    Value* own_lane = lane_id(lowering);
    Value* packed = llvm::PoisonValue::get(registers_type);
    for (uint32_t index = 0; index < access->count; ++index) {
      Value* first = nullptr;
      uint32_t step = 0;
      pair_of_lane(lowering, own_lane, index, access->transposed, first, step);
      Value* low = builder.CreateLoad(builder.getInt16Ty(), array_element(builder, matrices, first));
      Value* high = builder.CreateLoad(builder.getInt16Ty(), array_element(builder, matrices, builder.CreateAdd(first, builder.getInt32(step))));
      Value* word = builder.CreateOr(builder.CreateZExt(low, builder.getInt32Ty()), builder.CreateShl(builder.CreateZExt(high, builder.getInt32Ty()), 16));
      packed = builder.CreateInsertValue(packed, word, index);
    }
    return packed;
  });
  for (uint32_t index = 0; index < access->count; ++index)
    lowering.write(*destinations[index], builder.CreateExtractValue(registers, index), ScalarType::b32);
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
  llvm::AllocaInst* matrices = gather(lowering, Fragment{sources, 16, pair_layout, 8 * access->count, 8});
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
    Value* element = builder.CreateLoad(builder.getInt16Ty(), array_element(builder, matrices, index));
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
