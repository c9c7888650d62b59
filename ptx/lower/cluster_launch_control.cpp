// clusterlaunchcontrol (sm_100): a running cluster asks that one not yet started be cancelled,
// so that it can do that cluster's work itself (the persistent-kernel pattern). Clusters are
// one block here, and the runtime cancels a block no worker has claimed yet
// (host_abi::try_cancel_symbol), answering when the instruction issues: the response is in
// shared memory and its bytes are complete on the mbarrier at once.
#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {
namespace {

constexpr uint64_t response_bytes = 16;

// clusterlaunchcontrol.try_cancel.async{.shared::cta}.mbarrier::complete_tx::bytes
// {.multicast::cluster::all}.b128 [addr], [mbar]
void lower_try_cancel(FunctionLowering& lowering, const Instruction& instruction) {
  const auto& operands = instruction.operands;
  const Qualifiers& qualifiers = instruction.qualifiers;
  if (!has_word(instruction, "async") || !has_word(instruction, "mbarrier::complete_tx::bytes") ||
      qualifiers.types.size() != 1 || qualifiers.types[0] != ScalarType::b128 ||
      (qualifiers.space != StateSpace::shared && qualifiers.space != StateSpace::generic) || operands.size() != 2 ||
      operands[0].kind != Operand::Kind::address || operands[1].kind != Operand::Kind::address) {
    lowering.error(instruction.location, "clusterlaunchcontrol.try_cancel.async{.shared::cta}.mbarrier::complete_tx::bytes"
                                         "{.multicast::cluster::all}.b128 takes [addr], [mbar]");
    return;
  }
  auto& builder = lowering.builder();
  auto* pointer = builder.getPtrTy();
  llvm::FunctionCallee cancel =
      lowering.module().target().getOrInsertFunction(host_abi::try_cancel_symbol, builder.getVoidTy(), pointer);
  builder.CreateCall(cancel, {lowering.address(operands[0], qualifiers.space)});
  emit_mbarrier(lowering, static_cast<uint32_t>(intrinsics::MbarrierOperation::complete_tx),
                lowering.address(operands[1], qualifiers.space), builder.getInt64(response_bytes), builder.getInt32(0));
}

// clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, response;
// clusterlaunchcontrol.query_cancel.get_first_ctaid{::x,::y,::z}.b32.b128 d, response;
// clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {x, y, z, _}, response;
void lower_query_cancel(FunctionLowering& lowering, const Instruction& instruction) {
  const auto& operands = instruction.operands;
  const Qualifiers& qualifiers = instruction.qualifiers;
  const bool cancelled = has_word(instruction, "is_canceled");
  const ScalarType result = cancelled ? ScalarType::pred : ScalarType::b32;
  // Words of the response: 0 whether cancelled, 1 to 3 the block's x, y and z.
  int axis = -1;
  for (int candidate = 0; candidate < 3; ++candidate)
    if (has_word(instruction, std::string("get_first_ctaid::") + "xyz"[candidate])) axis = candidate;
  const bool vector = qualifiers.vector_width == 4;
  const bool formed = cancelled || axis >= 0 ? !vector : vector && has_word(instruction, "get_first_ctaid");
  if (!formed || qualifiers.types.size() != 2 || qualifiers.types[0] != result || qualifiers.types[1] != ScalarType::b128 ||
      operands.size() != 2) {
    lowering.error(instruction.location, "clusterlaunchcontrol.query_cancel takes .is_canceled.pred.b128 p, response, "
                                         ".get_first_ctaid::{x,y,z}.b32.b128 d, response or .get_first_ctaid.v4.b32.b128 "
                                         "{x, y, z, w}, response");
    return;
  }
  auto& builder = lowering.builder();
  llvm::Value* response = lowering.read(operands[1], ScalarType::b128);
  auto word = [&](uint32_t index) {
    return builder.CreateTrunc(builder.CreateLShr(response, 32 * index), builder.getInt32Ty());
  };
  if (cancelled) {
    lowering.write(operands[0], builder.CreateICmpNE(word(0), builder.getInt32(0)), ScalarType::pred);
    return;
  }
  if (axis >= 0) {
    lowering.write(operands[0], word(1 + static_cast<uint32_t>(axis)), ScalarType::b32);
    return;
  }
  // The fourth element means nothing; 0 rather than whatever the register held.
  auto elements = elements_of(operands[0]);
  for (uint32_t index = 0; index < elements.size(); ++index)
    lowering.write(*elements[index], index < 3 ? word(1 + index) : builder.getInt32(0), ScalarType::b32);
}

void lower_cluster_launch_control(FunctionLowering& lowering, const Instruction& instruction) {
  if (has_word(instruction, "try_cancel")) return lower_try_cancel(lowering, instruction);
  if (has_word(instruction, "query_cancel")) return lower_query_cancel(lowering, instruction);
  report_unsupported_form(lowering, instruction);
}

}  // namespace

void add_cluster_launch_control_lowerings(LoweringTable& table) {
  table["clusterlaunchcontrol"] = lower_cluster_launch_control;
}

}  // namespace xcuda::ptx
