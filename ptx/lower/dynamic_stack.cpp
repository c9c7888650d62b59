// alloca, stacksave and stackrestore: memory a thread takes on its stack at run time, released
// when the function that took it returns (function_lowering.cpp) or by a stackrestore to an
// earlier stacksave. The target keeps each thread's stack behind the intrinsics::stack_*
// functions. The pointers are local-space addresses, which on every target here are the
// generic addresses too, so they need 64 bits: the .u32 forms are refused.
#include <bit>

#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {
namespace {

// The PTX ISA's bound on alloca's alignment operand, and the alignment every allocation has.
constexpr uint64_t max_alignment = uint64_t{1} << 23;
constexpr uint64_t least_alignment = 8;

bool takes_64_bits(FunctionLowering& lowering, const Instruction& instruction) {
  if (instruction.qualifiers.types.empty() || instruction.qualifiers.types[0] == ScalarType::u64) return true;
  lowering.error(instruction.location, "'" + instruction.opcode +
                                           ".u32' is not supported: local addresses have 64 bits on this target");
  return false;
}

// alloca.u64 ptr, size{, immAlign}
void lower_alloca(FunctionLowering& lowering, const Instruction& instruction) {
  if (!takes_64_bits(lowering, instruction)) return;
  const auto& operands = instruction.operands;
  uint64_t alignment = least_alignment;
  if (operands.size() == 3) {
    const Operand& requested = operands[2];
    if (requested.kind != Operand::Kind::integer || !std::has_single_bit(requested.integer) ||
        requested.integer > max_alignment) {
      lowering.error(requested.location, "alloca's alignment must be a constant power of two up to 2^23");
      return;
    }
    alignment = std::max(alignment, requested.integer);
  }
  auto& builder = lowering.builder();
  auto* pointer = builder.getPtrTy();
  auto* u64 = builder.getInt64Ty();
  llvm::Function* allocate = lowering.module().intrinsic(intrinsics::stack_allocate, pointer, {pointer, u64, u64});
  llvm::Value* allocation = builder.CreateCall(
      allocate, {lowering.thread_context(), lowering.read(operands[1], ScalarType::u64), builder.getInt64(alignment)});
  lowering.write(operands[0], builder.CreatePtrToInt(allocation, u64), ScalarType::u64);
}

// stacksave.u64 d
void lower_stack_save(FunctionLowering& lowering, const Instruction& instruction) {
  if (!takes_64_bits(lowering, instruction)) return;
  auto& builder = lowering.builder();
  auto* pointer = builder.getPtrTy();
  llvm::Value* position =
      builder.CreateCall(lowering.module().intrinsic(intrinsics::stack_save, pointer, {pointer}), {lowering.thread_context()});
  lowering.write(instruction.operands[0], builder.CreatePtrToInt(position, builder.getInt64Ty()), ScalarType::u64);
}

// stackrestore.u64 a
void lower_stack_restore(FunctionLowering& lowering, const Instruction& instruction) {
  if (!takes_64_bits(lowering, instruction)) return;
  auto& builder = lowering.builder();
  auto* pointer = builder.getPtrTy();
  llvm::Value* position = builder.CreateIntToPtr(lowering.read(instruction.operands[0], ScalarType::u64), pointer);
  builder.CreateCall(lowering.module().intrinsic(intrinsics::stack_restore, builder.getVoidTy(), {pointer, pointer}),
                     {lowering.thread_context(), position});
}

}  // namespace

void add_dynamic_stack_lowerings(LoweringTable& table) {
  table["alloca"] = lower_alloca;
  table["stacksave"] = lower_stack_save;
  table["stackrestore"] = lower_stack_restore;
}

}  // namespace xcuda::ptx
