// cp.async (sm_80): a copy from global to shared memory that completes by the next
// cp.async.wait_group/wait_all; cp.async.bulk (sm_90): a copy of a multiple of 16 bytes into
// shared memory that completes on an mbarrier, or out of it, completing by a bulk group. On the
// host each copy is made when it is issued, which is one of the orders the PTX memory model
// allows: the mbarrier sees its bytes' transactions complete at once, and commit_group and the
// waits have nothing left to do. cp.reduce.async.bulk combines a buffer into another, element by
// element, through the runtime; the tensor forms are tensor_copy.cpp's.
#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {
namespace {

bool is_predicate(FunctionLowering& lowering, const Operand& operand) {
  return operand.resolution == Operand::Resolution::register_ &&
         lowering.function().declarations[operand.declaration]->type == ScalarType::pred;
}

// cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size | ignore-src}{, policy}:
// cp-size bytes land at dst, the first src-size of them from src (none with ignore-src true),
// the rest zeros.
void lower_copy(FunctionLowering& lowering, const Instruction& instruction) {
  const auto& operands = instruction.operands;
  bool has_policy = has_modifier(instruction, "L2::cache_hint");
  size_t count = operands.size() - (has_policy ? 1 : 0);
  if (count < 3 || count > 4 || operands[0].kind != Operand::Kind::address ||
      operands[1].kind != Operand::Kind::address || operands[2].kind != Operand::Kind::integer) {
    lowering.error(instruction.location, "cp.async takes [dst], [src], cp-size{, src-size}{, cache-policy}");
    return;
  }
  uint64_t copy_bytes = operands[2].integer;
  if (copy_bytes != 4 && copy_bytes != 8 && copy_bytes != 16) {
    lowering.error(operands[2].location, "cp.async copies 4, 8 or 16 bytes, not " + std::to_string(copy_bytes));
    return;
  }
  auto& builder = lowering.builder();
  llvm::Value* destination = lowering.address(operands[0], StateSpace::shared);
  llvm::Value* source = lowering.address(operands[1], StateSpace::global);
  llvm::Value* total = builder.getInt64(copy_bytes);
  llvm::Value* copied = total;
  if (count == 4) {
    const Operand& size = operands[3];
    if (is_predicate(lowering, size)) {
      copied = builder.CreateSelect(lowering.read(size, ScalarType::pred), builder.getInt64(0), total);
    } else {
      llvm::Value* requested = builder.CreateZExt(lowering.read(size, ScalarType::u32), builder.getInt64Ty());
      copied = builder.CreateBinaryIntrinsic(llvm::Intrinsic::umin, requested, total);
    }
  }
  builder.CreateMemCpy(destination, llvm::Align(1), source, llvm::Align(1), copied);
  if (copied != total) {
    llvm::Value* rest = builder.CreateGEP(builder.getInt8Ty(), destination, copied);
    builder.CreateMemSet(rest, builder.getInt8(0), builder.CreateSub(total, copied), llvm::Align(1));
  }
}

// cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]: the mbarrier sees an arrival once
// the thread's earlier cp.async copies are complete, which here they are. Without .noinc the
// pending count is raised first, so the arrival leaves the phase as it was: nothing to do.
void lower_copy_arrival(FunctionLowering& lowering, const Instruction& instruction) {
  const auto& operands = instruction.operands;
  if (operands.size() != 1 || operands[0].kind != Operand::Kind::address) {
    lowering.error(instruction.location, "cp.async.mbarrier.arrive takes [addr]");
    return;
  }
  if (!has_modifier(instruction, "noinc")) return;
  auto& builder = lowering.builder();
  emit_mbarrier(lowering, static_cast<uint32_t>(intrinsics::MbarrierOperation::arrive), lowering.address(operands[0], StateSpace::shared),
                builder.getInt64(0), builder.getInt32(1));
}

// Bulk copies move multiples of 16 bytes between 16-byte aligned addresses (an H200 reports a
// misaligned address otherwise): anything else ends the kernel rather than copy what the
// hardware would not.
void trap_unless_aligned(FunctionLowering& lowering, llvm::Value* destination, llvm::Value* source, llvm::Value* size) {
  auto& builder = lowering.builder();
  llvm::Function* function = builder.GetInsertBlock()->getParent();
  llvm::Value* bits = builder.CreateOr(builder.CreateOr(builder.CreatePtrToInt(destination, builder.getInt64Ty()),
                                                        builder.CreatePtrToInt(source, builder.getInt64Ty())),
                                       size);
  auto* aligned = llvm::BasicBlock::Create(lowering.context(), "bulk.aligned", function);
  auto* misaligned = llvm::BasicBlock::Create(lowering.context(), "bulk.misaligned", function);
  builder.CreateCondBr(builder.CreateICmpEQ(builder.CreateAnd(bits, 15), builder.getInt64(0)), aligned, misaligned);
  builder.SetInsertPoint(misaligned);
  emit_trap(lowering);
  builder.SetInsertPoint(aligned);
}

// cp.async.bulk.dst.src.completion{.multicast::cluster}{.L2::cache_hint} [dst], [src], size
// {, [mbar]}{, ctaMask}{, policy}, with dst.src shared::cta or shared::cluster from global or
// from shared::cta (completion mbarrier::complete_tx::bytes), or global from shared::cta
// (completion bulk_group). A cluster is one block here: a multicast reaches it when ctaMask
// names rank 0, and shared::cluster addresses are this block's.
void lower_bulk_copy(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const auto& operands = instruction.operands;
  const auto& modifiers = instruction.modifiers;
  // generic stands for a word that names no space a bulk copy takes.
  auto space_of = [&](size_t index) {
    std::string_view word = index < modifiers.size() ? std::string_view(modifiers[index].word) : std::string_view();
    if (word == "global") return StateSpace::global;
    if (word == "shared::cta" || word == "shared::cluster") return StateSpace::shared;
    return StateSpace::generic;
  };
  const StateSpace destination_space = space_of(2), source_space = space_of(3);
  const bool to_barrier = has_modifier(instruction, "mbarrier::complete_tx::bytes");
  const bool to_group = has_modifier(instruction, "bulk_group");
  const bool multicast = has_modifier(instruction, "multicast::cluster");
  const size_t expected = 3 + (to_barrier ? 1 : 0) + (multicast ? 1 : 0) + (has_modifier(instruction, "L2::cache_hint") ? 1 : 0);
  const bool valid = destination_space != StateSpace::generic && source_space != StateSpace::generic &&
                     to_barrier != to_group && operands.size() == expected &&
                     operands[0].kind == Operand::Kind::address && operands[1].kind == Operand::Kind::address &&
                     (!to_barrier || operands[3].kind == Operand::Kind::address) &&
                     (to_barrier ? destination_space == StateSpace::shared
                                 : destination_space == StateSpace::global && source_space == StateSpace::shared) &&
                     !has_modifier(instruction, "cp_mask") && (!multicast || source_space == StateSpace::global);
  if (!valid) {
    lowering.error(instruction.location, "cp.async.bulk takes [dst], [src], size, [mbar]{, ctaMask}{, policy} into "
                                         "shared memory with .mbarrier::complete_tx::bytes, or [dst], [src], size{, policy} "
                                         "into global memory with .bulk_group (.cp_mask is not supported yet)");
    return;
  }
  llvm::Value* destination = lowering.address(operands[0], destination_space);
  llvm::Value* source = lowering.address(operands[1], source_space);
  llvm::Value* size = builder.CreateZExt(lowering.read(operands[2], ScalarType::u32), builder.getInt64Ty());
  trap_unless_aligned(lowering, destination, source, size);
  llvm::BasicBlock* done = multicast ? begin_multicast(lowering, operands[4]) : nullptr;
  builder.CreateMemCpy(destination, llvm::Align(16), source, llvm::Align(16), size);
  if (to_barrier)
    emit_mbarrier(lowering, static_cast<uint32_t>(intrinsics::MbarrierOperation::complete_tx),
                  lowering.address(operands[3], StateSpace::shared), size, builder.getInt32(0));
  end_multicast(lowering, done);
}

// The CUtensorMapDataType numbering of a bulk reduction's .type, which the runtime shares with
// tensor maps; nullopt for a type bulk reductions do not take.
std::optional<uint32_t> reduced_element_type(ScalarType type) {
  switch (type) {
    case ScalarType::b32: case ScalarType::u32: return 2;
    case ScalarType::s32: return 3;
    case ScalarType::b64: case ScalarType::u64: return 4;
    case ScalarType::s64: return 5;
    case ScalarType::f16: return 6;
    case ScalarType::f32: return 7;
    case ScalarType::f64: return 8;
    case ScalarType::bf16: return 9;
    default: return std::nullopt;
  }
}

// cp.reduce.async.bulk.dst.src.completion{.L2::cache_hint}.redOp{.noftz}.type [dstMem], [srcMem],
// size{, [mbar]}{, policy}: shared::cluster from shared::cta completing on an mbarrier, or global
// from shared::cta through a bulk group. Each element of dstMem is combined with srcMem's, as the
// runtime's bulk reduction does.
void lower_bulk_reduction(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const auto& operands = instruction.operands;
  const auto& modifiers = instruction.modifiers;
  const bool to_barrier = has_modifier(instruction, "mbarrier::complete_tx::bytes");
  const bool into_global = modifiers.size() > 3 && modifiers[3].word == "global";
  std::optional<tensor_map::Reduction> reduction = bulk_reduction_of(instruction.qualifiers.operation);
  std::optional<uint32_t> element_type =
      instruction.qualifiers.types.size() == 1 ? reduced_element_type(instruction.qualifiers.types[0]) : std::nullopt;
  const size_t expected = 3 + (to_barrier ? 1 : 0) + (has_modifier(instruction, "L2::cache_hint") ? 1 : 0);
  if (!reduction || !element_type || to_barrier == into_global || to_barrier == has_modifier(instruction, "bulk_group") ||
      operands.size() != expected || operands[0].kind != Operand::Kind::address || operands[1].kind != Operand::Kind::address ||
      (to_barrier && operands[3].kind != Operand::Kind::address)) {
    lowering.error(instruction.location, "cp.reduce.async.bulk takes .redOp.type and [dstMem], [srcMem], size, [mbar] into "
                                         "shared::cluster, or [dstMem], [srcMem], size{, cache-policy} into global memory");
    return;
  }
  llvm::Value* destination = lowering.address(operands[0], into_global ? StateSpace::global : StateSpace::shared);
  llvm::Value* source = lowering.address(operands[1], StateSpace::shared);
  llvm::Value* size = lowering.read(operands[2], ScalarType::u32);
  trap_unless_aligned(lowering, destination, source, builder.CreateZExt(size, builder.getInt64Ty()));
  llvm::Type* pointer = builder.getPtrTy();
  auto callee = lowering.module().target().getOrInsertFunction(
      tensor_map::bulk_reduce_symbol,
      llvm::FunctionType::get(builder.getVoidTy(), {pointer, pointer, builder.getInt32Ty(), builder.getInt32Ty()}, false));
  builder.CreateCall(callee, {destination, source, size, builder.getInt32(tensor_map::reduction_operation(*reduction, *element_type))});
  if (to_barrier)
    emit_mbarrier(lowering, static_cast<uint32_t>(intrinsics::MbarrierOperation::complete_tx),
                  lowering.address(operands[3], StateSpace::shared), builder.CreateZExt(size, builder.getInt64Ty()), builder.getInt32(0));
}

void lower_cp(FunctionLowering& lowering, const Instruction& instruction) {
  const auto& modifiers = instruction.modifiers;
  bool is_async = !modifiers.empty() && modifiers[0].word == "async";
  std::string_view next = modifiers.size() > 1 ? std::string_view(modifiers[1].word) : std::string_view();
  if (is_async && (next == "commit_group" || next == "wait_group" || next == "wait_all")) return;
  if (is_async && (next == "ca" || next == "cg")) return lower_copy(lowering, instruction);
  if (is_async && next == "mbarrier") return lower_copy_arrival(lowering, instruction);
  if (is_async && next == "bulk" && modifiers.size() > 2) {
    std::string_view form = modifiers[2].word;
    // Prefetches into L2 change nothing here; groups complete when their copies are issued.
    if (form == "commit_group" || form == "wait_group" || form == "prefetch") return;
    if (form == "tensor") return lower_tensor_copy(lowering, instruction);
    return lower_bulk_copy(lowering, instruction);
  }
  if (!modifiers.empty() && modifiers[0].word == "reduce" && modifiers.size() > 3 && modifiers[1].word == "async" &&
      modifiers[2].word == "bulk")
    return modifiers[3].word == "tensor" ? lower_tensor_reduction(lowering, instruction) : lower_bulk_reduction(lowering, instruction);
  report_unsupported_form(lowering, instruction);
}

}  // namespace

llvm::BasicBlock* begin_multicast(FunctionLowering& lowering, const Operand& mask) {
  auto& builder = lowering.builder();
  llvm::Function* function = builder.GetInsertBlock()->getParent();
  auto* copy = llvm::BasicBlock::Create(lowering.context(), "multicast", function);
  auto* done = llvm::BasicBlock::Create(lowering.context(), "multicast.done", function);
  builder.CreateCondBr(builder.CreateTrunc(lowering.read(mask, ScalarType::b16), builder.getInt1Ty()), copy, done);
  builder.SetInsertPoint(copy);
  return done;
}

void end_multicast(FunctionLowering& lowering, llvm::BasicBlock* done) {
  if (!done) return;
  lowering.builder().CreateBr(done);
  lowering.builder().SetInsertPoint(done);
}

void report_unsupported_form(FunctionLowering& lowering, const Instruction& instruction) {
  std::string form = instruction.opcode;
  for (const Modifier& modifier : instruction.modifiers) form += "." + modifier.word;
  lowering.error(instruction.location, "'" + form + "' is not supported yet");
}

bool has_modifier(const Instruction& instruction, std::string_view word) {
  for (const Modifier& modifier : instruction.modifiers)
    if (modifier.word == word) return true;
  return false;
}

void add_async_copy_lowerings(LoweringTable& table) { table["cp"] = lower_cp; }

}  // namespace xcuda::ptx
