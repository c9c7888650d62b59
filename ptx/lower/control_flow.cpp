// Branches, returns, exit and trap. Barriers are in synchronization.cpp.
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

}  // namespace

void add_control_flow_lowerings(LoweringTable& table) {
  table["bra"] = lower_bra;
  table["ret"] = lower_ret;
  table["exit"] = lower_exit;
  table["trap"] = lower_trap;
  table["brkpt"] = lower_no_operation;
  table["nanosleep"] = lower_no_operation;
}

}  // namespace xcuda::ptx
