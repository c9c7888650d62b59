// What the checker knows about each PTX instruction: which modifier groups it accepts and the
// shape of its operands. The lowering keeps its own table of how to translate each opcode; an
// opcode known here but not there parses and checks but is reported as not supported yet.
#pragma once

#include <cstdint>
#include <string_view>

namespace xcuda::ptx {

// Groups of modifier words; an instruction lists the groups it accepts.
enum ModifierGroup : uint32_t {
  type_group = 1u << 0,             // .f32 .s32 .b64 …
  space_group = 1u << 1,            // .global .shared …
  float_rounding_group = 1u << 2,   // .rn .rz .rm .rp
  integer_rounding_group = 1u << 3, // .rni .rzi .rmi .rpi
  comparison_group = 1u << 4,       // .eq .lt .gtu …
  combine_group = 1u << 5,          // .and .or .xor (setp)
  atomic_operation_group = 1u << 6, // .add .min .inc .cas … (atom, red)
  vector_group = 1u << 7,           // .v2 .v4
  flush_group = 1u << 8,            // .ftz
  saturate_group = 1u << 9,         // .sat
  precision_group = 1u << 10,       // .approx .full
  width_group = 1u << 11,           // .wide .lo .hi
  uniform_group = 1u << 12,         // .uni
  volatile_group = 1u << 13,        // .volatile
  to_group = 1u << 14,              // .to (cvta)
  carry_group = 1u << 15,           // .cc
  cache_group = 1u << 16,           // .ca .cg .cs .lu .cv .wb .wt .nc, L1/L2 hints
  ordering_group = 1u << 17,        // .relaxed .acquire .release .acq_rel .sc, .cta .gpu .sys
  barrier_group = 1u << 18,         // .sync .arrive .red .aligned .all .any .ballot …
};

// Operand shape letters, one per operand; a trailing '?' makes the rest optional.
//   t  a value of the instruction type (types[0]); a vector for .v2/.v4
//   w  like t, but twice as wide with .wide
//   s  a value of the second type (cvt's source, set's operand)
//   p  a predicate;   P  a predicate destination or a p|q pair;   c  a predicate source, may be !p
//   u  a .u32 value (shift amounts, bit positions)
//   a  an address [x+n];   l  a label;   f  a function;   *  anything
struct InstructionSignature {
  std::string_view opcode;
  uint32_t modifier_groups;
  std::string_view operands;
  // Space-separated modifiers only this instruction accepts; a trailing '*' stands for any rest of
  // a word ("m64n*").
  std::string_view extra_words;
};

const InstructionSignature* find_instruction(std::string_view opcode);

// PTX instructions this compiler does not know yet, so that using one is reported as
// unsupported rather than unknown.
bool is_later_ptx_instruction(std::string_view opcode);

}  // namespace xcuda::ptx
