// Tensor copies of sm_90: cp.async.bulk.tensor moves a box of a tensor map (ptx/tensor_map.h)
// from global memory into shared memory, completing on an mbarrier, or back out through a bulk
// group; cp.reduce.async.bulk.tensor combines a box into global memory. Each becomes one call of
// the runtime's tensor_map::copy_symbol, made when the instruction issues (an order the PTX
// memory model allows, as for cp.async.bulk in async_copy.cpp). Clusters are one block here:
// shared::cluster addresses are this block's, and a multicast reaches it when ctaMask names
// rank 0. The im2col load modes and gather/scatter are reported as not supported yet.
// tensormap.replace (sm_90a) rewrites a field of a map in that layout, and tensormap.cp_fenceproxy
// copies a map out of shared memory.
#include <cstddef>

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

// The fields tensormap.replace names, whether an ordinal (a dimension, 0 the innermost) comes
// before the new value, and the .type the new value has.
struct ReplacedField {
  std::string_view name;
  bool ordinal;
  ScalarType type;
};
constexpr ReplacedField replaced_fields[] = {
    {"global_address", false, ScalarType::b64}, {"rank", false, ScalarType::b32},
    {"box_dim", true, ScalarType::b32},         {"global_dim", true, ScalarType::b32},
    {"global_stride", true, ScalarType::b64},   {"element_stride", true, ScalarType::b32},
    {"elemtype", false, ScalarType::b32},       {"interleave_layout", false, ScalarType::b32},
    {"swizzle_mode", false, ScalarType::b32},   {"swizzle_atomicity", false, ScalarType::b32},
    {"fill_mode", false, ScalarType::b32},
};

// Where an enumerated field's new value goes in xcuda's layout and what it becomes there, from
// the ISA's encodings of elemtype, interleave_layout, swizzle_mode, swizzle_atomicity and
// fill_mode. nullopt for a value xcuda's maps do not hold, as cuTensorMapEncodeTiled refuses
// them: packed sub-byte element types, interleaved layouts, the 96-byte swizzle (sm_100) and
// the swizzle atomicities other than 16 bytes (what CU_TENSOR_MAP_SWIZZLE_128B_ATOM_* encode).
struct EnumeratedValue {
  size_t offset;
  uint8_t value;
};
std::optional<EnumeratedValue> enumerated_value(std::string_view field, uint64_t value) {
  // The ISA numbers f32.ftz, f64 and bf16 8, 9 and 10; CUtensorMapDataType 10, 8 and 9.
  constexpr uint8_t data_types[] = {0, 1, 2, 3, 4, 5, 6, 7, 10, 8, 9, 11, 12};
  if (field == "elemtype" && value < std::size(data_types))
    return EnumeratedValue{offsetof(abi::TensorMap, element_type), data_types[value]};
  if (field == "interleave_layout" && value == 0) return EnumeratedValue{offsetof(abi::TensorMap, interleave), 0};
  // 0-3: none, 32, 64 and 128 bytes, numbered as CUtensorMapSwizzle does.
  if (field == "swizzle_mode" && value <= 3)
    return EnumeratedValue{offsetof(abi::TensorMap, swizzle), static_cast<uint8_t>(value)};
  if (field == "fill_mode" && value <= 1) return EnumeratedValue{offsetof(abi::TensorMap, fill), static_cast<uint8_t>(value)};
  return std::nullopt;
}

// tensormap.replace.tile.field{.global,.shared::cta}.b1024.type [addr], {ord,} new_val (sm_90a).
// The ISA gives the rank as one less than it; every other value is the field's own, the strides
// in bytes (ord i is dimension i + 1's). An enumerated field (new_val an immediate) whose value
// xcuda's layout cannot hold marks the map refused, so that a copy through it fails the launch.
void lower_tensormap_replace(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const auto& operands = instruction.operands;
  const Qualifiers& qualifiers = instruction.qualifiers;
  const ReplacedField* field = nullptr;
  for (const ReplacedField& candidate : replaced_fields)
    if (has_word(instruction, candidate.name)) field = &candidate;
  const size_t value_index = field && field->ordinal ? 2 : 1;
  const bool enumerated = field && !field->ordinal && field->name != "global_address" && field->name != "rank";
  if (!field || !has_word(instruction, "tile") || !has_word(instruction, "b1024") || qualifiers.types.size() != 1 ||
      qualifiers.types[0] != field->type || (qualifiers.space != StateSpace::global && qualifiers.space != StateSpace::shared) ||
      operands.size() != value_index + 1 || operands[0].kind != Operand::Kind::address ||
      (field->ordinal && operands[1].kind != Operand::Kind::integer) ||
      (enumerated && operands[1].kind != Operand::Kind::integer)) {
    lowering.error(instruction.location, "tensormap.replace.tile.field{.global,.shared::cta}.b1024.type takes [addr], new_val "
                                         "(an immediate for the enumerated fields), or [addr], ord, new_val with an immediate ord");
    return;
  }
  if (field->ordinal) {
    const uint64_t dimensions = field->name == "global_stride" ? abi::max_rank - 1 : abi::max_rank;
    if (operands[1].integer >= dimensions) {
      lowering.error(operands[1].location, "tensormap.replace." + std::string(field->name) + " takes ord 0-" +
                                               std::to_string(dimensions - 1) + ", not " + std::to_string(operands[1].integer));
      return;
    }
  }
  llvm::Value* map = lowering.address(operands[0], qualifiers.space);
  auto store = [&](size_t offset, llvm::Value* value) {
    builder.CreateAlignedStore(value, builder.CreateConstGEP1_64(builder.getInt8Ty(), map, offset), llvm::Align(1));
  };
  const std::string_view name = field->name;
  if (enumerated) {
    // 16-byte swizzle atoms are what xcuda's swizzle field means already.
    if (name == "swizzle_atomicity" && operands[1].integer == 0) return;
    if (std::optional<EnumeratedValue> value = enumerated_value(name, operands[1].integer))
      store(value->offset, builder.getInt8(value->value));
    else
      store(offsetof(abi::TensorMap, magic), builder.getInt32(abi::refused_magic));
    return;
  }
  const uint64_t ordinal = field->ordinal ? operands[1].integer : 0;
  llvm::Value* value = lowering.read(operands[value_index], field->type);
  if (name == "global_address") {
    store(offsetof(abi::TensorMap, global_address), value);
  } else if (name == "rank") {
    store(offsetof(abi::TensorMap, rank), builder.CreateTrunc(builder.CreateAdd(value, builder.getInt32(1)), builder.getInt8Ty()));
  } else if (name == "box_dim") {
    store(offsetof(abi::TensorMap, box) + 2 * ordinal, builder.CreateTrunc(value, builder.getInt16Ty()));
  } else if (name == "global_dim") {
    store(offsetof(abi::TensorMap, global_dims) + 8 * ordinal, builder.CreateZExt(value, builder.getInt64Ty()));
  } else if (name == "global_stride") {
    store(offsetof(abi::TensorMap, global_strides) + 8 * ordinal, value);
  } else if (ordinal != 0) {
    // element_stride: without interleave the first dimension has no stride (cuTensorMapEncodeTiled
    // keeps it at 1 likewise).
    store(offsetof(abi::TensorMap, element_strides) + ordinal, builder.CreateTrunc(value, builder.getInt8Ty()));
  }
}

// tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned [dst],
// [src], size (sm_90a): the map in shared memory is copied out, and the copy released to the
// tensor copies that read it, which on the host are plain loads.
void lower_tensormap_copy(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const auto& operands = instruction.operands;
  if (!has_modifier(instruction, "global") || !has_modifier(instruction, "shared::cta") ||
      !has_word(instruction, "tensormap::generic") || instruction.qualifiers.order != MemoryOrder::release ||
      operands.size() != 3 || operands[0].kind != Operand::Kind::address || operands[1].kind != Operand::Kind::address ||
      operands[2].kind != Operand::Kind::integer || operands[2].integer != 128) {
    lowering.error(instruction.location, "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync"
                                         ".aligned takes [dst], [src], 128");
    return;
  }
  builder.CreateMemCpy(lowering.address(operands[0], StateSpace::global), llvm::Align(64),
                       lowering.address(operands[1], StateSpace::shared), llvm::Align(64), builder.getInt64(128));
  builder.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
}

void lower_tensormap(FunctionLowering& lowering, const Instruction& instruction) {
  if (has_word(instruction, "replace")) return lower_tensormap_replace(lowering, instruction);
  if (has_word(instruction, "cp_fenceproxy")) return lower_tensormap_copy(lowering, instruction);
  report_unsupported_form(lowering, instruction);
}

}  // namespace

void add_tensor_map_lowerings(LoweringTable& table) { table["tensormap"] = lower_tensormap; }

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
