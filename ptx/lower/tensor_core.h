// What the warp-level matrix instructions (matrix.cpp) and the warpgroup ones
// (warpgroup_matrix.cpp) share: the ISA's fragment layouts of a warp's 16-row tiles, the gathering
// of a warp's fragments at warp exchanges, and the model of how an H200 tensor core sums products.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/IR/IRBuilder.h>

#include "lower/function_lowering.h"

namespace xcuda::ptx::tensor_core {

inline constexpr uint32_t warp_size = 32;

struct Position {
  uint32_t row, column;
};
// Where element `index` of a lane's fragment sits in its matrix; the ISA numbers a lane's
// elements across its registers, lowest bits first.
using Layout = Position (*)(uint32_t lane, uint32_t index);
using AnyLayout = llvm::function_ref<Position(uint32_t lane, uint32_t index)>;

inline uint32_t group_of(uint32_t lane) { return lane >> 2; }
inline uint32_t thread_in_group(uint32_t lane) { return lane & 3; }

// m16n8k8 and m16n8k16 .f16/.bf16 A: pairs along a row, rows g and g+8, then columns +8.
inline Position a_16bit(uint32_t lane, uint32_t index) {
  return {group_of(lane) + 8 * ((index >> 1) & 1), 2 * thread_in_group(lane) + (index & 1) + 8 * (index >> 2)};
}
inline Position b_16bit(uint32_t lane, uint32_t index) {
  return {2 * thread_in_group(lane) + (index & 1) + 8 * (index >> 1), group_of(lane)};
}
// .tf32 and the m16n8 .f64 shapes: one element per register, rows g and g+8, then columns +4.
inline Position a_32bit(uint32_t lane, uint32_t index) {
  return {group_of(lane) + 8 * (index & 1), thread_in_group(lane) + 4 * (index >> 1)};
}
inline Position b_32bit(uint32_t lane, uint32_t index) { return {thread_in_group(lane) + 4 * index, group_of(lane)}; }
// Integer inputs, `per_register` to a register (.s8/.u8: 4, .s4/.u4: 8, .b1: 32): runs of
// per_register along a row, rows g and g+8, then columns + 4·per_register.
template <uint32_t per_register>
Position a_packed(uint32_t lane, uint32_t index) {
  return {group_of(lane) + 8 * ((index / per_register) & 1),
          per_register * thread_in_group(lane) + index % per_register + 4 * per_register * (index / (2 * per_register))};
}
template <uint32_t per_register>
Position b_packed(uint32_t lane, uint32_t index) {
  return {per_register * thread_in_group(lane) + index % per_register + 4 * per_register * (index / per_register), group_of(lane)};
}
// The m8n8 shapes (k = 4·per_register): one register of A and one of B; .f64 m8n8k4 takes one
// element in each.
template <uint32_t per_register>
Position a_m8n8(uint32_t lane, uint32_t index) {
  return {group_of(lane), per_register * thread_in_group(lane) + index};
}
template <uint32_t per_register>
Position b_m8n8(uint32_t lane, uint32_t index) {
  return {per_register * thread_in_group(lane) + index, group_of(lane)};
}
// mma.sync's C and D but m8n8k4 .f16's: pairs along a row, rows g and g+8.
inline Position c_pairs(uint32_t lane, uint32_t index) {
  return {group_of(lane) + 8 * (index >> 1), 2 * thread_in_group(lane) + (index & 1)};
}
// m8n8k4 .f16 is four products of 8 × 4 by 4 × 8, one per quad pair q: lanes 4q…4q+3 hold rows
// (or columns) 0-3 of its matrices, lanes 4q+16…4q+19 rows 4-7. Here the four A are one 32 × 4
// matrix (q's rows from 8q), the four B one 4 × 32 (q's columns from 8q), C and D 32 × 8.
inline uint32_t quad_pair_base(uint32_t lane) { return 8 * ((lane >> 2) & 3) + 4 * (lane >> 4); }
inline Position a_quad_pair_row(uint32_t lane, uint32_t index) { return {quad_pair_base(lane) + thread_in_group(lane), index}; }
inline Position a_quad_pair_column(uint32_t lane, uint32_t index) { return {quad_pair_base(lane) + index, thread_in_group(lane)}; }
inline Position b_quad_pair_row(uint32_t lane, uint32_t index) { return {thread_in_group(lane), quad_pair_base(lane) + index}; }
inline Position b_quad_pair_column(uint32_t lane, uint32_t index) { return {index, quad_pair_base(lane) + thread_in_group(lane)}; }
inline Position c_quad_pair_f16(uint32_t lane, uint32_t index) { return {quad_pair_base(lane) + thread_in_group(lane), index}; }
inline Position c_quad_pair_f32(uint32_t lane, uint32_t index) {
  return {quad_pair_base(lane) + (lane & 1) + (index & 2), (index & 4) + (lane & 2) + (index & 1)};
}

enum class Element { f16, bf16, tf32, f64, s8, u8, s4, u4, b1, e4m3, e5m2, f32, s32 };

inline bool is_byte(Element element) { return element == Element::s8 || element == Element::u8; }
// The integer inputs whose products a tensor core sums exactly; .b1 sums bits instead.
inline bool is_integer(Element element) { return is_byte(element) || element == Element::s4 || element == Element::u4; }
inline bool is_signed(Element element) { return element == Element::s8 || element == Element::s4; }
inline bool is_eight_bit_float(Element element) { return element == Element::e4m3 || element == Element::e5m2; }

inline uint32_t element_bits(Element element) {
  switch (element) {
    case Element::f16: case Element::bf16: return 16;
    case Element::s8: case Element::u8: case Element::e4m3: case Element::e5m2: return 8;
    case Element::s4: case Element::u4: return 4;
    case Element::b1: return 1;
    case Element::f64: return 64;
    default: return 32;
  }
}

std::optional<Element> element_named(std::string_view name);
// The element types among the instruction's modifiers, in written order (.tf32 and the FP8
// types have no register type of their own).
std::vector<Element> written_elements(const Instruction& instruction);

// A per-thread array in the function's entry block, so that the host target keeps it in the
// thread's storage across the exchanges.
llvm::AllocaInst* thread_array(llvm::IRBuilder<>& builder, llvm::Type* element, uint32_t count);
llvm::Value* array_element(llvm::IRBuilder<>& builder, llvm::AllocaInst* array, llvm::Value* index);

// A lane's fragment of a rows × columns matrix: the elements of `bits` bits packed in `registers`
// (of 32 or 64 bits), at the places `layout` names.
struct Fragment {
  std::vector<llvm::Value*> registers;
  uint32_t bits;
  AnyLayout layout;
  uint32_t rows, columns;
};
// Copies every lane's fragments into matrices (row-major) of their own, one per fragment, at one
// exchange of words: offer_fragments() and then place_fragments(), which may come in a function
// the first calls (the registers' values matter to the offer only).
std::vector<llvm::AllocaInst*> gather(FunctionLowering& lowering, std::span<const Fragment> fragments);
void offer_fragments(FunctionLowering& lowering, std::span<const Fragment> fragments);
std::vector<llvm::AllocaInst*> place_fragments(FunctionLowering& lowering, std::span<const Fragment> fragments);
inline llvm::AllocaInst* gather(FunctionLowering& lowering, const Fragment& fragment) {
  return gather(lowering, std::span(&fragment, 1)).front();
}
// Where the running lane's element 0 sits, as `layout` places it: row and column. The
// accumulator layouts place element `index` at that position plus layout(0, index), whatever
// the lane.
std::pair<llvm::Value*, llvm::Value*> first_position(FunctionLowering& lowering, Layout layout, llvm::Value* lane);
// The operand's registers as integers of `bits` bits.
std::vector<llvm::Value*> read_registers(FunctionLowering& lowering, const Operand& operand, uint32_t bits);

// Where a dot product's k terms lie: A's elements at a, a + 1, …, B's at b, b + b_stride, …
// (pointers to integers of the elements' widths).
struct DotTerms {
  llvm::Value* a;
  llvm::Value* b;
  uint32_t b_stride;
};
// Whose adder a sum follows: mma.sync's and wmma's, or wgmma's, which sums FP8 products otherwise.
enum class Adder { mma_sync, warpgroup };
// D = C + Σ A·B for one element, with A, B and C as bits of their element types and D as bits of
// the accumulator's: floating-point inputs as tensor_core.cpp describes, .s8/.u8 exactly. The i32
// k, the number of terms, need not be a constant; at most 32.
llvm::Value* tensor_core_dot(llvm::IRBuilder<>& builder, const DotTerms& terms, llvm::Value* k, llvm::Value* c, Element a_type,
                             Element b_type, Element accumulator, Adder adder);
// mma.sync m8n8k4 .f16, the Volta shape, as an H100 computes it: not with a tensor core's aligned
// sum but with rounded .f32 additions of the exact products (as fused multiply-adds would):
// into .f32, D = C + (((p0 + p1) + p2) + p3); into .f16, D = ((C + (p0 + p1)) + (p2 + p3)) then
// rounded to nearest .f16; each addition rounded to nearest .f32, an .f16 C widened exactly.
// Fitted to 1,572,864 results recorded on an H100 (.f32 from .f32 C, .f32 from .f16 C, .f16 from
// .f16 C; tests/cuda/half_accumulators.cu), all of which it matches. NaN is the canonical
// 0x7FFFFFFF (0x7FFF).
llvm::Value* quad_pair_dot(FunctionLowering& lowering, const DotTerms& terms, llvm::Value* c, Element c_type, Element d_type);
llvm::Value* integer_dot(llvm::IRBuilder<>& builder, std::span<llvm::Value* const> a, std::span<llvm::Value* const> b,
                         llvm::Value* c, bool a_signed, bool b_signed, bool saturate);

// One element of an mma.sync's or a wmma.mma's D, from a row of A whose k elements are
// consecutive and a column of B whose elements lie `b_stride` apart.
struct DotForm {
  Element a_type, b_type, accumulator;
  uint32_t k, b_stride;
  uint32_t step;  // the terms a tensor core sums at once: k, but 4 for wmma's .tf32
  bool saturate;  // .satfinite, for .s8/.u8 and .s4/.u4
  // .b1: D = C + Σ popc(A xor B) with .xor.popc, Σ popc(A and B) with .and.popc.
  bool exclusive_bits = false;
};
// The module's function for `form`, (A's row, B's column, C, k) -> D, with the per-thread
// matrices in `address_space`, written on first use (the host target drops the body of those its
// builtin library holds: target/host/builtin_library.h).
llvm::Function* dot_function(llvm::Module& module, const DotForm& form, unsigned address_space);
std::string dot_function_name(const DotForm& form, unsigned address_space);
// D = C + Σ A·B as above (.f64 as a chain of fused multiply-adds), through a call to the module's
// function for `form`. Inline, each element's sum would be copied per element, per instruction
// and per thread loop of the host target: when the sums were unrolled, one m16n8k16 mma.sync
// made 6 000 instructions, and a module of six of them compiled for 10 s.
llvm::Value* call_dot(FunctionLowering& lowering, const DotForm& form, llvm::Value* a_row, llvm::Value* b_column, llvm::Value* c);

}  // namespace xcuda::ptx::tensor_core
