// Tensor copies of sm_90: cp.async.bulk.tensor moves a box of a tensor map (ptx/tensor_map.h)
// from global memory into shared memory, completing on an mbarrier, or back out through a bulk
// group; cp.reduce.async.bulk.tensor combines a box into global memory. Each becomes one call of
// the runtime's tensor_map::copy_symbol, made when the instruction issues (an order the PTX
// memory model allows, as for cp.async.bulk in async_copy.cpp). Clusters are one block here:
// shared::cluster addresses are this block's, and a multicast reaches it when ctaMask names
// rank 0. The im2col load modes and gather/scatter are reported as not supported yet.
#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"
#include "tensor_map.h"

namespace xcuda::ptx {
namespace {

namespace abi = tensor_map;
using llvm::Value;

// The .1d-.5d of the instruction, or 0.
uint32_t rank_of(const Instruction& instruction) {
  for (const Modifier& modifier : instruction.modifiers)
    if (modifier.word.size() == 2 && modifier.word[1] == 'd' && modifier.word[0] >= '1' && modifier.word[0] <= '5')
      return static_cast<uint32_t>(modifier.word[0] - '0');
  return 0;
}

// Where generated code finds the map: [tensorMap, {coordinates}] with the map's generic address
// in a register, or a parameter, constant or global variable named directly. The coordinates go
// into a stack array of max_rank words.
struct TensorOperand {
  Value* map = nullptr;
  Value* coordinates = nullptr;
};

std::optional<TensorOperand> tensor_operand(FunctionLowering& lowering, const Operand& operand, uint32_t rank) {
  if (operand.kind != Operand::Kind::address || operand.elements.size() != 1 ||
      operand.elements[0].kind != Operand::Kind::vector || operand.elements[0].elements.size() != rank) {
    lowering.error(operand.location, "expected [tensorMap, {coordinates}] with " + std::to_string(rank) + " coordinates");
    return std::nullopt;
  }
  auto& builder = lowering.builder();
  Operand base = operand;
  base.elements.clear();
  TensorOperand result;
  result.map = lowering.address(base, StateSpace::generic);
  llvm::Type* words = llvm::ArrayType::get(builder.getInt32Ty(), abi::max_rank);
  llvm::IRBuilder<> entry(&builder.GetInsertBlock()->getParent()->getEntryBlock(),
                          builder.GetInsertBlock()->getParent()->getEntryBlock().begin());
  result.coordinates = entry.CreateAlloca(words, nullptr, "tensor.coordinates");
  for (uint32_t axis = 0; axis < rank; ++axis)
    builder.CreateStore(lowering.read(operand.elements[0].elements[axis], ScalarType::s32),
                        builder.CreateConstGEP2_32(words, result.coordinates, 0, axis));
  return result;
}

Value* call_copy(FunctionLowering& lowering, const TensorOperand& tensor, uint32_t operation, Value* shared) {
  auto& builder = lowering.builder();
  llvm::Module& module = lowering.module().target();
  llvm::Type* pointer = builder.getPtrTy();
  auto callee = module.getOrInsertFunction(
      abi::copy_symbol, llvm::FunctionType::get(builder.getInt32Ty(), {pointer, builder.getInt32Ty(), pointer, pointer, builder.getInt32Ty()}, false));
  Value* shared_address = builder.CreateTrunc(
      builder.CreateSub(builder.CreatePtrToInt(shared, builder.getInt64Ty()), builder.CreatePtrToInt(lowering.shared_base(), builder.getInt64Ty())),
      builder.getInt32Ty());
  return builder.CreateCall(callee, {tensor.map, builder.getInt32(operation), tensor.coordinates, shared, shared_address});
}

bool has_unsupported_mode(const Instruction& instruction) {
  for (const Modifier& modifier : instruction.modifiers)
    if (modifier.word.starts_with("im2col") || modifier.word.starts_with("tile::") || modifier.word.starts_with("cta_group"))
      return true;
  return false;
}

}  // namespace

std::optional<abi::Reduction> bulk_reduction_of(Operation operation) {
  switch (operation) {
    case Operation::add: return abi::Reduction::add;
    case Operation::min: return abi::Reduction::min;
    case Operation::max: return abi::Reduction::max;
    case Operation::inc: return abi::Reduction::inc;
    case Operation::dec: return abi::Reduction::dec;
    case Operation::and_: return abi::Reduction::bitwise_and;
    case Operation::or_: return abi::Reduction::bitwise_or;
    case Operation::xor_: return abi::Reduction::bitwise_xor;
    default: return std::nullopt;
  }
}

// cp.async.bulk.tensor.Nd.dst.src{.load_mode}.completion{.multicast::cluster}{.L2::cache_hint}
//   shared::cluster/shared::cta from global, mbarrier::complete_tx::bytes:
//     [dstMem], [tensorMap, {coordinates}], [mbar]{, ctaMask}{, policy}
//   global from shared::cta, bulk_group: [tensorMap, {coordinates}], [srcMem]{, policy}
void lower_tensor_copy(FunctionLowering& lowering, const Instruction& instruction) {
  if (has_unsupported_mode(instruction)) return report_unsupported_form(lowering, instruction);
  const auto& operands = instruction.operands;
  const uint32_t rank = rank_of(instruction);
  const bool to_barrier = has_modifier(instruction, "mbarrier::complete_tx::bytes");
  const bool multicast = has_modifier(instruction, "multicast::cluster");
  const size_t hint = has_modifier(instruction, "L2::cache_hint") ? 1 : 0;
  auto& builder = lowering.builder();
  if (to_barrier) {
    if (rank == 0 || operands.size() != 3 + (multicast ? 1 : 0) + hint || operands[0].kind != Operand::Kind::address ||
        operands[2].kind != Operand::Kind::address) {
      lowering.error(instruction.location, "cp.async.bulk.tensor.Nd into shared memory takes [dstMem], "
                                           "[tensorMap, {coordinates}], [mbar]{, ctaMask}{, cache-policy}");
      return;
    }
    std::optional<TensorOperand> tensor = tensor_operand(lowering, operands[1], rank);
    if (!tensor) return;
    llvm::BasicBlock* done = multicast ? begin_multicast(lowering, operands[3]) : nullptr;
    Value* bytes = call_copy(lowering, *tensor, abi::operation(abi::Direction::load, rank), lowering.address(operands[0], StateSpace::shared));
    emit_mbarrier(lowering, static_cast<uint32_t>(intrinsics::MbarrierOperation::complete_tx),
                  lowering.address(operands[2], StateSpace::shared), builder.CreateZExt(bytes, builder.getInt64Ty()), builder.getInt32(0));
    end_multicast(lowering, done);
    return;
  }
  if (rank == 0 || !has_modifier(instruction, "bulk_group") || operands.size() != 2 + hint ||
      operands[1].kind != Operand::Kind::address) {
    lowering.error(instruction.location, "cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group takes "
                                         "[tensorMap, {coordinates}], [srcMem]{, cache-policy}");
    return;
  }
  if (std::optional<TensorOperand> tensor = tensor_operand(lowering, operands[0], rank))
    call_copy(lowering, *tensor, abi::operation(abi::Direction::store, rank), lowering.address(operands[1], StateSpace::shared));
}

// cp.reduce.async.bulk.tensor.Nd.global.shared::cta.redOp{.load_mode}.bulk_group{.L2::cache_hint}
//   [tensorMap, {coordinates}], [srcMem]{, policy}: the element type is the map's.
void lower_tensor_reduction(FunctionLowering& lowering, const Instruction& instruction) {
  if (has_unsupported_mode(instruction)) return report_unsupported_form(lowering, instruction);
  const auto& operands = instruction.operands;
  const uint32_t rank = rank_of(instruction);
  std::optional<abi::Reduction> reduction = bulk_reduction_of(instruction.qualifiers.operation);
  const size_t hint = has_modifier(instruction, "L2::cache_hint") ? 1 : 0;
  if (rank == 0 || !reduction || !has_modifier(instruction, "bulk_group") || operands.size() != 2 + hint ||
      operands[1].kind != Operand::Kind::address) {
    lowering.error(instruction.location, "cp.reduce.async.bulk.tensor.Nd.global.shared::cta.redOp.bulk_group takes "
                                         "[tensorMap, {coordinates}], [srcMem]{, cache-policy}");
    return;
  }
  if (std::optional<TensorOperand> tensor = tensor_operand(lowering, operands[0], rank))
    call_copy(lowering, *tensor, abi::operation(abi::Direction::reduce, rank, *reduction),
              lowering.address(operands[1], StateSpace::shared));
}

}  // namespace xcuda::ptx
