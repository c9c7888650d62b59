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

// A subnormal f32 becomes a zero of the same sign (.ftz); other types pass through.
llvm::Value* flush_subnormal(FunctionLowering& lowering, llvm::Value* value);
// Clamps to [0, 1], NaN to +0 (.sat on float instructions).
llvm::Value* saturate_float(FunctionLowering& lowering, llvm::Value* value);
llvm::Value* canonical_nan(llvm::Type* type);
// NVIDIA GPUs (measured on an H200) return the canonical NaN 0x7FFFFFFF from every f32 and f16
// operation whose result is NaN, where x86 propagates payloads or returns 0xFFC00000. f64
// results match x86 and pass through.
llvm::Value* canonicalize_nan(FunctionLowering& lowering, llvm::Value* value);

// f16x2 and bf16x2 live in 32-bit registers; float arithmetic works on them as two-lane vectors.
llvm::Type* arithmetic_type(FunctionLowering& lowering, ScalarType type);
llvm::Value* read_float(FunctionLowering& lowering, const Operand& operand, ScalarType type, bool flush);
void write_float(FunctionLowering& lowering, const Operand& operand, llvm::Value* value, ScalarType type, bool flush);

}  // namespace xcuda::ptx
