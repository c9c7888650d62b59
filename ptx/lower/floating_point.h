// Floating-point helpers shared by the arithmetic and conversion lowerings: exact rounding
// modes, flush-to-zero and saturation as PTX defines them.
#pragma once

#include <functional>
#include <string_view>

#include "lower/function_lowering.h"

namespace xcuda::ptx {

using FloatOperation = std::function<llvm::Value*(llvm::IRBuilder<>& builder, llvm::ArrayRef<llvm::Value*> arguments)>;

// Runs `operation` under the PTX rounding mode. Round-to-nearest (the default) is plain IR;
// .rz/.rm/.rp run in a small helper that switches the hardware rounding mode around one
// constrained operation, so the result is the correctly rounded one, not an approximation.
llvm::Value* with_rounding(FunctionLowering& lowering, Rounding rounding, std::string_view name,
                           llvm::ArrayRef<llvm::Value*> arguments, llvm::Type* result, const FloatOperation& operation);

// A subnormal f32 or f16 becomes a zero of the same sign (.ftz); other types pass through.
llvm::Value* flush_subnormal(FunctionLowering& lowering, llvm::Value* value);
// A value whose magnitude is below `smallest_normal` becomes a zero of the same sign: .ftz
// decided on an exact or wider result, before its rounding (measured on an H200).
llvm::Value* flush_below(FunctionLowering& lowering, llvm::Value* value, double smallest_normal);
// Clamps to [0, 1], NaN to +0 (.sat on float instructions).
llvm::Value* saturate_float(FunctionLowering& lowering, llvm::Value* value);
llvm::Value* canonical_nan(llvm::Type* type);
// NVIDIA GPUs (measured on an H200) return the canonical NaN 0x7FFFFFFF from every f32 and f16
// operation whose result is NaN, where x86 propagates payloads or returns 0xFFC00000. f64
// results match x86 and pass through.
llvm::Value* canonicalize_nan(FunctionLowering& lowering, llvm::Value* value);

// A floating-point format that conversions round into: f16, bf16, tf32 (an f32 bit pattern with
// 10 fraction bits), the 8-bit formats e4m3 and e5m2, the 6-bit e2m3 and e3m2 (each in the low
// bits of a byte) and the 4-bit e2m1.
struct NarrowFormat {
  int exponent_bits;
  int fraction_bits;
  int largest_exponent;   // unbiased exponent of the largest finite value
  uint64_t largest_fraction;  // its fraction field
  bool has_infinity;      // e4m3, e2m3, e3m2 and e2m1 have none
  bool has_nan;           // e2m3, e3m2 and e2m1 have none
  uint32_t nan;           // what a NaN input becomes, as stored
  uint32_t storage_bits;  // the width of one stored value
  uint32_t low_bits;      // zero bits below the code: 13 for tf32, whose code sits in the top 19 bits
};
extern const NarrowFormat f16_format, bf16_format, tf32_format, e4m3_format, e5m2_format, e3m2_format, e2m3_format,
    e2m1_format;

// What a NaN input becomes (measured on an H200): the format's canonical NaN (arithmetic and
// conversions from f32 and f16), the quiet NaN with the input's sign and leading payload bits
// (conversions from f64), or the f32 input's bits cut to the format (cvt.rna.tf32.f32).
enum class NanRule : uint8_t { canonical, keep_payload, truncate_bits };

struct NarrowRounding {
  Rounding rounding = Rounding::rn;  // .rn .rz .rm .rp or .rna
  bool satfinite = false;            // out-of-range results become the largest finite value
  bool relu = false;                 // negative results become +0
  NanRule nan = NanRule::canonical;
  // .rs, stochastic rounding, when set (and `rounding` unused): each value's random bits, an
  // integer below 2^random_width (a vector of them for a vector of values), are added to the top
  // random_width bits of what the rounding discards; a carry out of that addition rounds away
  // from zero, none toward zero.
  llvm::Value* random_bits = nullptr;
  int random_width = 0;
};

// Rounds an f16, f32 or f64 value (or a vector of them) to `format` with exactly one rounding,
// returning the stored bits as an integer of format.storage_bits (or a vector of them).
llvm::Value* round_to_narrow(FunctionLowering& lowering, llvm::Value* value, const NarrowFormat& format,
                             NarrowRounding rounding);
// The value of stored bits of `format` (integer or vector of integers) as f32; exact.
llvm::Value* widen_from_narrow(llvm::IRBuilder<>& builder, llvm::Value* bits, const NarrowFormat& format);

// f16, bf16 and their packed pairs compute in f32 (f64 for fma), which holds them exactly:
// widen_half widens a 16-bit float value or vector, narrow_half rounds an f32 or f64 result
// back once, to the instruction type's arithmetic type.
bool is_half_type(ScalarType type);
llvm::Value* widen_half(FunctionLowering& lowering, llvm::Value* value);
llvm::Value* narrow_half(FunctionLowering& lowering, llvm::Value* value, ScalarType type, NarrowRounding rounding);

// The .bN type of a width: packed and narrow float values travel as plain bits.
ScalarType bits_of_width(uint32_t bits);

// f16x2 and bf16x2 live in 32-bit registers; float arithmetic works on them as two-lane vectors.
llvm::Type* arithmetic_type(FunctionLowering& lowering, ScalarType type);
llvm::Value* read_float(FunctionLowering& lowering, const Operand& operand, ScalarType type, bool flush);
void write_float(FunctionLowering& lowering, const Operand& operand, llvm::Value* value, ScalarType type, bool flush);

}  // namespace xcuda::ptx
