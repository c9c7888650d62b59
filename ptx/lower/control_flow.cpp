// Branches (bra, brx.idx), returns, exit and trap. Barriers are in synchronization.cpp.
#include <algorithm>

#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {

void emit_trap(FunctionLowering& lowering, const char* intrinsic) {
  auto& builder = lowering.builder();
  auto* pointer = builder.getPtrTy();
  llvm::Function* trap = lowering.module().intrinsic(intrinsic, builder.getVoidTy(), {pointer});
  trap->setDoesNotReturn();
  builder.CreateCall(trap, {lowering.thread_context()});
  builder.CreateUnreachable();
}

namespace {

void lower_bra(FunctionLowering& lowering, const Instruction& instruction) {
  lowering.builder().CreateBr(lowering.label_block(instruction.operands[0].name));
  lowering.continue_after_terminator();
}

void lower_ret(FunctionLowering& lowering, const Instruction&) { lowering.return_from_function(false); }

// Inside a .func, exit ends the thread in every caller too (see function_result_type()).
void lower_exit(FunctionLowering& lowering, const Instruction&) { lowering.return_from_function(true); }

void lower_trap(FunctionLowering& lowering, const Instruction&) {
  emit_trap(lowering);
  lowering.continue_after_terminator();
}

// brx.idx index, list: goes to the index-th label of the .branchtargets list. The ISA leaves an
// index past the end undefined; here it traps rather than jump anywhere.
void lower_indexed_branch(FunctionLowering& lowering, const Instruction& instruction) {
  const std::string& name = instruction.operands[1].name;
  const auto& lists = lowering.function().target_lists;
  auto list = std::find_if(lists.begin(), lists.end(), [&](const TargetList& candidate) { return candidate.name == name; });
  auto& builder = lowering.builder();
  llvm::Value* index = lowering.read(instruction.operands[0], ScalarType::u32);
  llvm::Function* function = builder.GetInsertBlock()->getParent();
  auto* outside = llvm::BasicBlock::Create(lowering.context(), "branch_index_outside", function);
  auto* branch = builder.CreateSwitch(index, outside, static_cast<unsigned>(list->targets.size()));
  for (uint32_t position = 0; position < list->targets.size(); ++position)
    branch->addCase(builder.getInt32(position), lowering.label_block(list->targets[position].name));
  builder.SetInsertPoint(outside);
  emit_trap(lowering);
  lowering.continue_after_terminator();
}

void lower_no_operation(FunctionLowering&, const Instruction&) {}

}  // namespace

void add_control_flow_lowerings(LoweringTable& table) {
  table["bra"] = lower_bra;
  table["brx"] = lower_indexed_branch;
  table["ret"] = lower_ret;
  table["exit"] = lower_exit;
  table["trap"] = lower_trap;
  // With no debugger attached a GPU fails the launch at a breakpoint as at a trap
  // (cudaErrorLaunchFailure on an H100, driver 580).
  table["brkpt"] = lower_trap;
  table["nanosleep"] = lower_no_operation;
  // Programmatic dependent launch: a grid here starts only once the grid before it in the
  // stream has completed, so there is nothing to signal and nothing left to wait for.
  table["griddepcontrol"] = lower_no_operation;
  // Register allocation and profiler events mean nothing to a CPU.
  table["setmaxnreg"] = lower_no_operation;
  table["pmevent"] = lower_no_operation;
}

}  // namespace xcuda::ptx
