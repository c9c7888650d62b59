// call: every function takes the thread context, then a pointer to each result and each
// argument .param variable, so aggregates and byte arrays pass exactly as laid out in PTX.
#include "lower/instruction_lowering.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {
namespace {

void lower_call(FunctionLowering& lowering, const Instruction& instruction) {
  const auto& operands = instruction.operands;
  bool has_results = operands[0].kind == Operand::Kind::list;
  const Operand& callee = operands[has_results ? 1 : 0];
  std::vector<llvm::Value*> arguments{lowering.thread_context()};
  auto pass = [&](const Operand& list) {
    for (const Operand& value : list.elements) arguments.push_back(lowering.declaration_pointer(value.declaration));
  };
  if (has_results) pass(operands[0]);
  size_t argument_list = has_results ? 2 : 1;
  if (argument_list < operands.size()) pass(operands[argument_list]);
  lowering.builder().CreateCall(lowering.module().function(callee.declaration), arguments);
}

}  // namespace

void add_call_lowerings(LoweringTable& table) { table["call"] = lower_call; }

}  // namespace xcuda::ptx
