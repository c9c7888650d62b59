// The syntax tree of one PTX module as the parser builds it. The checker later fills the
// fields marked "resolved" and decodes each instruction's modifiers into `Qualifiers`.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "parse/lexer.h"

namespace xcuda::ptx {

enum class ScalarType : uint8_t {
  b8, b16, b32, b64, b128,
  u8, u16, u32, u64,
  s8, s16, s32, s64,
  f16, f16x2, bf16, bf16x2, f32, f64,
  pred,
  s16x2, u16x2,  // two 16-bit integers in 32 bits (add, min, max on sm_90)
  f32x2,         // two f32 in 64 bits (add, sub, mul, fma on sm_100)
};

enum class TypeKind : uint8_t { bits, unsigned_integer, signed_integer, floating, predicate };

uint32_t bit_width(ScalarType type);
TypeKind kind_of(ScalarType type);
inline bool is_float(ScalarType type) { return kind_of(type) == TypeKind::floating; }
inline bool is_signed(ScalarType type) { return kind_of(type) == TypeKind::signed_integer; }
std::optional<ScalarType> scalar_type_named(std::string_view word);  // "f32" → f32
std::string_view name_of(ScalarType type);

enum class StateSpace : uint8_t { generic, reg, sreg, constant, global, local, param, shared, tex };
std::optional<StateSpace> state_space_named(std::string_view word);  // "global" → global
std::string_view name_of(StateSpace space);

// A value in an initialiser list: a number or the address of another variable.
struct InitialValue {
  enum class Kind : uint8_t { integer, floating, address } kind = Kind::integer;
  uint64_t integer = 0;  // two's complement bits of an integer literal
  double floating = 0;   // decimal or hex-encoded float literal, as a double
  bool float_is_single = false;  // written as 0fXXXXXXXX: `integer` holds the f32 bits
  std::string symbol;    // for addresses, optionally wrapped in generic()
  int64_t offset = 0;
  uint64_t mask = 0;     // 0xFF00(symbol): only these bits of the address; 0 for the whole address
  SourceLocation location;
};

// Registers, variables in any state space, and function parameters.
struct VariableDeclaration {
  SourceLocation location;
  StateSpace space = StateSpace::reg;
  ScalarType type = ScalarType::b32;
  uint32_t vector_width = 1;  // .v2 / .v4
  uint32_t alignment = 0;     // 0: the natural alignment of the type
  std::string name;
  // %r<100> declares %r0 … %r99; 0 means a single name.
  uint32_t register_count = 0;
  std::vector<uint64_t> array_dimensions;  // x[4][8] → {4, 8}
  bool unsized_array = false;              // x[]: an .extern .shared dynamic array
  bool is_extern = false;
  bool is_visible = false;
  bool is_weak = false;
  bool is_managed = false;  // .attribute(.managed): a __managed__ variable, which the host reaches too
  std::vector<InitialValue> initializer;  // flattened in memory order

  uint32_t element_bytes() const {
    return (type == ScalarType::pred ? 1 : bit_width(type) / 8) * vector_width;
  }
  uint64_t size_in_bytes() const;
  uint32_t effective_alignment() const { return alignment != 0 ? alignment : element_bytes(); }
};

struct Operand {
  enum class Kind : uint8_t {
    name,            // register, special register, variable, label or function
    integer,         // integer literal
    floating,        // float literal
    address,         // [base+offset] or [offset]
    vector,          // {a, b, c, d}
    list,            // (a, b): call arguments and results
    predicate_pair,  // p|q: setp's two destinations
    sink,            // _ in a vector: the element is discarded
  };
  Kind kind = Kind::name;
  SourceLocation location;
  std::string name;        // name, or an address's base (empty for [offset])
  std::string component;   // x, y, z, w after a special register: %tid.x
  bool negated = false;    // !p
  bool minus = false;      // -r: vmad's negated sources
  uint64_t integer = 0;    // integer literal, or a 0f/0d literal's bits
  double floating = 0;     // a decimal float literal
  uint8_t float_bits = 0;  // 32 for 0f, 64 for 0d, 0 for decimal
  int64_t offset = 0;      // address displacement, or added to a variable's address: mov d, table+8
  std::vector<Operand> elements;

  // Resolved by the checker for names and address bases: which declaration (an index into the
  // enclosing function's `declarations`, or a module variable) and which element of %r<N>.
  enum class Resolution : uint8_t { unresolved, register_, special_register, local_variable,
                                    module_variable, label, function };
  Resolution resolution = Resolution::unresolved;
  uint32_t declaration = 0;
  uint32_t register_index = 0;
};

enum class Rounding : uint8_t { none, rn, rz, rm, rp, rna, rni, rzi, rmi, rpi };
enum class Comparison : uint8_t {
  none, eq, ne, lt, le, gt, ge, lo, ls, hi, hs,
  equ, neu, ltu, leu, gtu, geu, num, nan,
};
// The memory-consistency semantics of ld, st, atom, red and fence (.relaxed, .acquire …).
enum class MemoryOrder : uint8_t { unspecified, relaxed, acquire, release, acquire_release, sequential };

// setp's .and/.or/.xor, and the operation of atom/red.
enum class Operation : uint8_t { none, and_, or_, xor_, add, min, max, inc, dec, exch, cas };

// An instruction's modifiers decoded by the checker.
struct Qualifiers {
  std::vector<ScalarType> types;  // in written order: cvt.f32.s32 → {f32, s32}
  StateSpace space = StateSpace::generic;
  Rounding rounding = Rounding::none;
  Comparison comparison = Comparison::none;
  Operation operation = Operation::none;
  MemoryOrder order = MemoryOrder::unspecified;
  uint32_t vector_width = 1;
  bool ftz = false, saturate = false, approx = false, full = false;
  bool wide = false, low = false, high = false;
  bool uniform = false, volatile_access = false, to_space = false;
  bool carry_out = false;  // .cc
  std::vector<std::string> other;  // words only one instruction cares about: .wrap, .shiftamt
};

struct Modifier {
  std::string word;  // without the dot
  SourceLocation location;
};

struct Guard {
  Operand predicate;
  bool negated = false;
};

struct Instruction {
  SourceLocation location;
  std::optional<Guard> guard;
  std::string opcode;
  std::vector<Modifier> modifiers;
  std::vector<Operand> operands;
  Qualifiers qualifiers;  // filled by the checker
};

struct Label {
  SourceLocation location;
  std::string name;
};

// `{` and `}` inside a body: names declared inside are not visible after the `}`.
struct ScopeBegin {
  SourceLocation location;
};
struct ScopeEnd {
  SourceLocation location;
};

using Statement = std::variant<VariableDeclaration, Label, Instruction, ScopeBegin, ScopeEnd>;

// `name: .callprototype (.param .b32 _) _ (.param .b64 _);` inside a body: the signature of an
// indirect call that names it.
struct CallPrototype {
  SourceLocation location;
  std::string name;
  std::vector<VariableDeclaration> returns;
  std::vector<VariableDeclaration> parameters;
};

// `name: .branchtargets L0, L1;` (for brx.idx) or `name: .calltargets f, g;` (for an indirect
// call): the only places control may go.
struct TargetList {
  SourceLocation location;
  std::string name;
  bool functions = false;  // .calltargets rather than .branchtargets
  std::vector<Operand> targets;
};

struct Function {
  SourceLocation location;
  std::string name;
  bool is_entry = false;
  bool is_visible = false;
  bool is_extern = false;
  bool is_weak = false;
  bool has_body = false;
  std::vector<VariableDeclaration> returns;     // .func only
  std::vector<VariableDeclaration> parameters;
  std::array<uint32_t, 3> max_threads{0, 0, 0};       // .maxntid
  std::array<uint32_t, 3> required_threads{0, 0, 0};  // .reqntid
  uint32_t min_blocks_per_multiprocessor = 0;
  std::vector<Statement> body;
  // Found anywhere in the body; their names are labels of the whole function.
  std::vector<CallPrototype> call_prototypes;
  std::vector<TargetList> target_lists;
  // Filled by the checker: the return values, the parameters, then every declaration in the
  // body, in order, so that operands can refer to them by index whatever their scope.
  std::vector<const VariableDeclaration*> declarations;
};

// `.alias alias, aliasee;`: calls to the declared function `alias` reach `aliasee`.
struct FunctionAlias {
  SourceLocation location;
  std::string alias;
  std::string aliasee;
};

// A word of .target after its first: an option (texmode_independent, debug) or an architecture.
struct TargetOption {
  std::string word;
  SourceLocation location;
};

struct Module {
  std::string version;  // "9.0"
  std::string target;   // "sm_80"
  SourceLocation version_location, target_location;
  std::vector<TargetOption> target_options;
  uint32_t address_size = 64;
  SourceLocation address_size_location;
  std::vector<FunctionAlias> aliases;
  std::vector<VariableDeclaration> variables;
  std::vector<Function> functions;
};

}  // namespace xcuda::ptx
