// Branches, returns, exit, trap, and block barriers. A barrier stays an intrinsic here; the
// target decides how threads meet (the host target splits the kernel at barriers).
#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {
namespace {

void lower_bra(FunctionLowering& lowering, const Instruction& instruction) {
  lowering.builder().CreateBr(lowering.label_block(instruction.operands[0].name));
  lowering.continue_after_terminator();
}

void lower_ret(FunctionLowering& lowering, const Instruction&) {
  lowering.builder().CreateRetVoid();
  lowering.continue_after_terminator();
}

void lower_exit(FunctionLowering& lowering, const Instruction& instruction) {
  if (!lowering.function().is_entry) {
    lowering.error(instruction.location, "exit inside a .func is not supported yet");
    return;
  }
  lower_ret(lowering, instruction);
}

void lower_trap(FunctionLowering& lowering, const Instruction&) {
  auto& builder = lowering.builder();
  auto* pointer = builder.getPtrTy();
  llvm::Function* trap = lowering.module().intrinsic(intrinsics::trap, builder.getVoidTy(), {pointer});
  trap->setDoesNotReturn();
  builder.CreateCall(trap, {lowering.thread_context()});
  builder.CreateUnreachable();
  lowering.continue_after_terminator();
}

void lower_no_operation(FunctionLowering&, const Instruction&) {}

bool has_word(const Instruction& instruction, std::string_view word) {
  const auto& other = instruction.qualifiers.other;
  return std::find(other.begin(), other.end(), word) != other.end();
}

// bar.sync / barrier.sync with the whole block; partial thread counts and bar.red/arrive come
// with the fallback execution model.
void lower_barrier(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  if (has_word(instruction, "warp")) {
    lower_warp_barrier(lowering, instruction);
    return;
  }
  bool is_sync = has_word(instruction, "sync") || (instruction.opcode == "barrier" && instruction.qualifiers.other.empty());
  if (!is_sync || has_word(instruction, "red") || has_word(instruction, "arrive") ||
      instruction.operands.size() > 1) {
    lowering.error(instruction.location, "this form of '" + instruction.opcode + "' is not supported yet");
    return;
  }
  llvm::Value* identifier = instruction.operands.empty() ? builder.getInt32(0)
                                                         : lowering.read(instruction.operands[0], ScalarType::u32);
  auto* pointer = builder.getPtrTy();
  llvm::Function* barrier = lowering.module().intrinsic(intrinsics::barrier, builder.getVoidTy(), {pointer, builder.getInt32Ty()});
  barrier->addFnAttr(llvm::Attribute::Convergent);
  builder.CreateCall(barrier, {lowering.thread_context(), identifier});
}

}  // namespace

void add_control_flow_lowerings(LoweringTable& table) {
  table["bra"] = lower_bra;
  table["ret"] = lower_ret;
  table["exit"] = lower_exit;
  table["trap"] = lower_trap;
  table["brkpt"] = lower_no_operation;
  table["nanosleep"] = lower_no_operation;
  table["bar"] = lower_barrier;
  table["barrier"] = lower_barrier;
}

}  // namespace xcuda::ptx
