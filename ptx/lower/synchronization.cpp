// Block barriers in every PTX spelling: bar{.cta}.sync / barrier{.cta}.sync{.aligned} a{, b},
// bar.arrive / barrier.arrive a, b, bar.red / barrier.red with .popc, .and and .or (what
// __syncthreads_count/_and/_or become), and bar.warp.sync, which is a warp collective. The
// barrier of the whole block stays intrinsics::barrier, which a target may run its fastest way;
// every other form becomes intrinsics::barrier_operation.
#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {
namespace {

using intrinsics::BarrierOperation;

bool has_word(const Instruction& instruction, std::string_view word) {
  const auto& other = instruction.qualifiers.other;
  return std::find(other.begin(), other.end(), word) != other.end();
}

// Operand positions: bar.red d, a{, b}, {!}c; the others a{, b}.
struct BarrierOperands {
  size_t first = 0;  // the barrier number
  size_t count = 0;  // how many operands name the barrier and its thread count
};

void emit_whole_block_barrier(FunctionLowering& lowering, llvm::Value* identifier) {
  auto& builder = lowering.builder();
  llvm::Function* barrier = lowering.module().intrinsic(intrinsics::barrier, builder.getVoidTy(),
                                                        {builder.getPtrTy(), builder.getInt32Ty()});
  barrier->addFnAttr(llvm::Attribute::Convergent);
  builder.CreateCall(barrier, {lowering.thread_context(), identifier});
}

llvm::Value* emit_barrier_operation(FunctionLowering& lowering, llvm::Value* identifier,
                                    llvm::Value* thread_count, BarrierOperation operation,
                                    llvm::Value* value) {
  auto& builder = lowering.builder();
  auto* i32 = builder.getInt32Ty();
  llvm::Function* barrier = lowering.module().intrinsic(intrinsics::barrier_operation, i32,
                                                        {builder.getPtrTy(), i32, i32, i32, i32});
  barrier->addFnAttr(llvm::Attribute::Convergent);
  return builder.CreateCall(barrier, {lowering.thread_context(), identifier, thread_count,
                                      builder.getInt32(static_cast<uint32_t>(operation)), value});
}

void lower_barrier(FunctionLowering& lowering, const Instruction& instruction) {
  if (has_word(instruction, "warp")) {
    lower_warp_barrier(lowering, instruction);
    return;
  }
  auto& builder = lowering.builder();
  const auto& operands = instruction.operands;
  bool reduces = has_word(instruction, "red");
  bool arrives = has_word(instruction, "arrive");
  BarrierOperation operation = BarrierOperation::sync;
  if (arrives) operation = BarrierOperation::arrive;
  if (reduces) {
    if (has_word(instruction, "popc"))
      operation = BarrierOperation::count_true;
    else if (has_word(instruction, "and"))
      operation = BarrierOperation::all_true;
    else if (has_word(instruction, "or"))
      operation = BarrierOperation::any_true;
    else {
      lowering.error(instruction.location,
                     "'" + instruction.opcode + ".red' needs .popc, .and or .or");
      return;
    }
  }
  BarrierOperands layout{reduces ? size_t{1} : size_t{0}, operands.size() - (reduces ? 2 : 0)};
  if (operands.size() < (reduces ? 3u : 1u) || layout.count < 1 || layout.count > 2 ||
      (arrives && layout.count != 2) || (reduces && arrives)) {
    lowering.error(instruction.location, "'" + instruction.opcode +
                                             "' has the wrong operands: expected " +
                                             (reduces   ? "d, a{, b}, {!}c"
                                              : arrives ? "a, b"
                                                        : "a{, b}"));
    return;
  }
  llvm::Value* identifier = lowering.read(operands[layout.first], ScalarType::u32);
  if (operation == BarrierOperation::sync && layout.count == 1) {
    emit_whole_block_barrier(lowering, identifier);
    return;
  }
  llvm::Value* thread_count = layout.count == 2
                                  ? lowering.read(operands[layout.first + 1], ScalarType::u32)
                                  : builder.getInt32(0);
  llvm::Value* value = builder.getInt32(0);
  if (reduces)
    value =
        builder.CreateZExt(lowering.read(operands.back(), ScalarType::pred), builder.getInt32Ty());
  llvm::Value* result =
      emit_barrier_operation(lowering, identifier, thread_count, operation, value);
  if (!reduces) return;
  if (operation == BarrierOperation::count_true)
    lowering.write(operands[0], result, ScalarType::u32);
  else
    lowering.write(operands[0], builder.CreateICmpNE(result, builder.getInt32(0)),
                   ScalarType::pred);
}

}  // namespace

void add_synchronization_lowerings(LoweringTable& table) {
  table["bar"] = lower_barrier;
  table["barrier"] = lower_barrier;
}

}  // namespace xcuda::ptx
